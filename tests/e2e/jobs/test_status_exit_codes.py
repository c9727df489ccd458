"""Issue 22 item 16: ``status JOB`` exits as the job's outcome would, as exit-codes.md and ``status --help``
say: 0 succeeded or no outcome yet (running, held, Unattended), 1 an outcome that is not success. The same
on SQLite and PostgreSQL (the forwarded case: tests/e2e/forwarding/test_jobs_across_hosts.py)."""

from __future__ import annotations

import json
import os
import signal

import pytest

from tests.e2e.jobs.cli import Cli, await_state

pytestmark = pytest.mark.slow


def _codes(cli: Cli, job: str, **env: str) -> tuple[int, int]:
    plain, as_json = cli.run("status", job, env=env), cli.run("status", job, "--json", env=env)
    assert "Traceback" not in plain.stderr + as_json.stderr
    assert json.loads(as_json.stdout)["job"] == job  # --json still prints the job on a non-zero exit
    return plain.returncode, as_json.returncode


def test_a_failed_job_s_status_exits_1(cli: Cli) -> None:
    assert cli.run("submit", "--name", "fails", "--", "false").returncode == 1
    assert _codes(cli, "fails") == (1, 1)
    assert "fails  failed" in cli.run("status", "fails").stdout


def test_a_cancelled_job_s_status_exits_1(cli: Cli) -> None:
    supervisor = cli.start("submit", "--name", "stopped", "--", "sleep", "120")
    await_state(cli, "stopped", "running", timeout=120)
    assert _codes(cli, "stopped") == (0, 0)  # running: no outcome yet
    assert cli.run("cancel", "stopped").returncode == 0
    assert supervisor.wait(timeout=60) == 1
    assert _codes(cli, "stopped") == (1, 1)


def test_a_succeeded_job_and_an_unattended_running_one_exit_0(cli: Cli) -> None:
    assert cli.run("submit", "--name", "fine", "--", "true").returncode == 0
    assert _codes(cli, "fine") == (0, 0)
    supervisor = cli.start("submit", "--name", "alone", "--", "sleep", "120")
    await_state(cli, "alone", "running", timeout=120)
    os.killpg(supervisor.pid, signal.SIGKILL)
    supervisor.wait()
    try:
        assert _codes(cli, "alone") == (0, 0)
        assert "Unattended" in cli.run("status", "alone").stdout
    finally:
        cli.run("stop", "--emergency", "alone")


def test_status_of_every_job_is_a_list_and_exits_0_even_with_a_failed_one(cli: Cli) -> None:
    assert cli.run("submit", "--name", "fails", "--", "false").returncode == 1
    done = cli.run("status")
    assert done.returncode == 0 and "fails  failed" in done.stdout


@pytest.mark.postgres
def test_on_postgresql_a_failed_job_exits_1_and_a_succeeded_one_0(cli: Cli, postgres_server: object,
                                                                  postgres_db: str) -> None:
    url = postgres_server.url(postgres_db)  # type: ignore[attr-defined]
    env = {"DUNSCAITH_RECORDS__BACKEND": "postgresql", "DUNSCAITH_RECORDS__URL": url}
    assert cli.run("submit", "--name", "pg-fails", "--", "false", env=env).returncode == 1
    assert cli.run("submit", "--name", "pg-fine", "--", "true", env=env).returncode == 0
    assert _codes(cli, "pg-fails", **env) == (1, 1)
    assert _codes(cli, "pg-fine", **env) == (0, 0)


def test_status_help_lists_its_own_exit_codes(cli: Cli) -> None:
    text = " ".join(cli.run("status", "--help").stdout.split())
    assert "0 succeeded or no outcome yet" in text and "1 the outcome is not success" in text
    assert "4 the supervisor gave up" not in text and "5 work outstanding" not in text
