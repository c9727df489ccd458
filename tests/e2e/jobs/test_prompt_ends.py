"""A local job's end wakes its supervisor, and a cancel returns once the object is stopped (issues 24, 26).

Both are judged on the record's order, never on a stopwatch: the supervisor announces in its lock when
it will loop next, and the wrapper writes a cancelled worker's outcome only the grace (10 s) after its
TERM; what the record says must come before both.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import JobRecord
from tests.e2e.jobs.cli import Cli, await_condition, await_long_sleep, await_state

pytestmark = pytest.mark.slow


def _record(cli: Cli, job: str) -> JobRecord:
    store = SqliteStore.open(cli.root, SystemHost())
    try:
        return store.read(JobId(job))
    finally:
        store.close()


def _kinds(record: JobRecord) -> list[str]:
    return [line.kind for line in record.events]


def _at(record: JobRecord, kind: str) -> datetime:
    return next(line.at for line in record.events if line.kind == kind)


def _instance(cli: Cli, job: str) -> Path:
    object_id = cli.status(job)["attempts"][-1]["object_id"]
    return cli.root / "local-scheduler" / str(object_id) / "instance"


def test_a_local_jobs_end_is_recorded_before_the_supervisors_next_loop(cli: Cli) -> None:
    """supervise.poll = 3600: the supervisor is asleep to a loop 15 s or more away when the job ends;
    the job's outcome file wakes it, so the outcome is recorded before that loop was due."""
    go = cli.tmp / "go"
    supervisor = cli.start("submit", "--name", "prompt", "--", "sh", "-c",
                           f"while [ ! -e {go} ]; do sleep 0.2; done", DUNSCAITH_SUPERVISE__POLL="3600")
    await_state(cli, "prompt", "running", timeout=120)
    await_long_sleep(cli, "prompt", 15)
    next_loop = datetime.fromisoformat(cli.status("prompt")["supervisor"]["next_loop"])
    go.touch()
    assert supervisor.wait(timeout=120) == 0
    record = _record(cli, "prompt")
    kinds = _kinds(record)
    assert kinds[-3:] == ["observed", "outcome", "settled"], kinds
    assert _at(record, "outcome") < next_loop  # woken by the job's end, not by the loop's own time
    assert cli.status("prompt")["outcome"]["result"] == "succeeded"


def test_a_cancel_says_stopping_then_stopped_and_the_end_is_recorded_before_the_wrappers_outcome(cli: Cli) -> None:
    supervisor = cli.start("submit", "--name", "stop-me", "--", "sleep", "300")
    await_state(cli, "stop-me", "running", timeout=120)
    instance = _instance(cli, "stop-me")
    done = cli.run("cancel", "stop-me")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2, lines
    assert "cancel confirmed by its supervisor" in lines[0] and "is stopping" in lines[0], lines
    # said while the object stops; a sleep that ends on its TERM at once may be recorded cancelled before
    # the command reads the answer, and the line says that instead
    assert lines[0].endswith(("(now stopping)", "(now cancelled)")), lines
    assert "stopped (now cancelled)" in lines[1], lines
    assert supervisor.wait(timeout=60) == 1  # the outcome is not success
    record = _record(cli, "stop-me")
    kinds = _kinds(record)
    assert kinds.index("request") < kinds.index("answer") < kinds.index("cancelling") < kinds.index("outcome")
    # the wrapper writes the outcome only the grace after the TERM: the record said cancelled before that
    await_condition(lambda: (instance / "outcome.json").exists(), timeout=60, what="the wrapper's outcome")
    wrapper_outcome = datetime.fromisoformat(json.loads((instance / "outcome.json").read_text())["at"])
    assert _at(record, "outcome") < wrapper_outcome
    assert cli.status("stop-me")["outcome"]["result"] == "cancelled"


def test_a_cancel_with_json_says_whether_the_object_stopped(cli: Cli) -> None:
    supervisor = cli.start("submit", "--name", "stop-json", "--", "sleep", "300")
    await_state(cli, "stop-json", "running", timeout=120)
    done = cli.run("cancel", "stop-json", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["answer"], answer["stopped"], answer["state"]) == ("confirmed", True, "cancelled")
    assert supervisor.wait(timeout=60) == 1
