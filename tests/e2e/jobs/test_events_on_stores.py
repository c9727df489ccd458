"""``dunscaith events JOB`` on a PostgreSQL store (read from another login node's record root: the shared
store names no host) and on the real Slurm 22.05 (its job ids and states, as scontrol and sacct gave them)."""

from __future__ import annotations

import json
import re
import socket
from typing import Any

import pytest

from tests.e2e.jobs.cli import Cli
from tests.infra.postgres import PostgresTestServer

pytestmark = pytest.mark.slow


def _who(line: str) -> str:
    """Who acted, on an event line ("" on a heading)."""
    found = re.match(r"^  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  (\S+) ", line)
    return found.group(1) if found else ""


def _objects(done_stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done_stdout.splitlines()]


@pytest.mark.postgres
def test_events_on_a_postgresql_store_from_another_record_root(cli: Cli, postgres_server: PostgresTestServer,
                                                                 postgres_db: str) -> None:
    env = {"DUNSCAITH_RECORDS__BACKEND": "postgresql", "DUNSCAITH_RECORDS__URL": postgres_server.url(postgres_db)}
    done = cli.run("submit", "--name", "pg-ev", "--", "sh", "-c", "exit 3", env=env)
    assert done.returncode == 1, done.stderr
    other = {**env, "DUNSCAITH_RECORDS__ROOT": str(cli.tmp / "login2-records")}
    shown = cli.run("events", "pg-ev", env=other)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    host = socket.gethostname()
    assert lines[0] == (f"job pg-ev: cluster local (local), submitted on host {host}, recorded in "
                        f"{postgres_server.url(postgres_db)} (shared by login nodes)")
    # any login node may have committed a line of a shared store: none is named on them
    assert [_who(line) for line in lines if _who(line)] and all("@" not in _who(line) for line in lines)
    assert _who(lines[1]) == "submit" and "recorded: sh -c 'exit 3'" in lines[1]
    assert lines[2].startswith("attempt 1 (object ")
    assert any(_who(line) == "scheduler" and line.endswith("failed, exit code 3") for line in lines)
    assert _who(lines[-2]) == "supervisor" and lines[-2].endswith("outcome failed: failed, exit code 3")
    objects = _objects(cli.run("events", "--json", "pg-ev", env=other).stdout)
    assert {o["host"] for o in objects} == {None}
    assert [o["kind"] for o in objects][:2] == ["job-recorded", "submitting"] and objects[-1]["kind"] == "settled"


@pytest.mark.slurm
def test_events_on_slurm(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "sl-ev", "--", "sh", "-c", "exit 4", timeout=180)
    assert done.returncode == 1, (done.stdout, done.stderr)
    status = on_slurm.status("sl-ev")
    job_id = status["attempts"][0]["object_id"]
    assert job_id.isdigit()
    shown = on_slurm.run("events", "sl-ev")
    assert shown.returncode == 0, shown.stderr
    host = socket.gethostname()
    lines = shown.stdout.splitlines()
    assert lines[0] == f"job sl-ev: cluster test (slurm), submitted on host {host}, recorded in {on_slurm.root}"
    assert lines[2] == f"attempt 1 (object {job_id})"
    said = [(_who(line), line.split(maxsplit=3)[-1]) for line in lines if _who(line)]
    assert ("scheduler", f"created {job_id}, held") in said
    assert (f"supervisor@{host}", f"released {job_id} (stdout {status['stdout']})") in said
    assert ("scheduler", f"{job_id} failed, exit code 4: NonZeroExitCode") in said
    assert said[-2] == (f"supervisor@{host}", "outcome failed: failed, exit code 4, NonZeroExitCode")
    objects = _objects(on_slurm.run("events", "--json", "sl-ev").stdout)
    created = next(o for o in objects if o["kind"] == "created")
    assert created["data"] == {"attempt": 1, "object_id": job_id} and created["actor"] == "scheduler"
    assert objects[-2]["kind"] == "outcome" and objects[-2]["data"]["result"] == "failed"
