"""Issue 22 item 4, as a user meets it: a PostgreSQL store that accepts connections but never answers.

With every server process stopped (SIGSTOP), or the store's tables held ACCESS EXCLUSIVE by another
session (what VACUUM FULL or LOCK TABLE take), a supervisor with a small ``supervise.giveup`` stops
with exit 4 and says why, while the fault is still there; a command (status, hold) ends with one line
and exit 2 instead of hanging. Real processes, the local scheduler, a real PostgreSQL 15.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from tests.e2e.jobs.cli import Cli
from tests.e2e.jobs.test_postgres import await_state_env
from tests.infra.postgres import PostgresTestServer, private_server

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _env(url: str, **extra: str) -> dict[str, str]:
    return {"DUNSCAITH_RECORDS__BACKEND": "postgresql", "DUNSCAITH_RECORDS__URL": url,
            "DUNSCAITH_SUPERVISE__GIVEUP": "8", "DUNSCAITH_SUPERVISE__POLL": "0.5",
            # the store's timings are the defaults (every answer within 10 s), but for a quicker new session
            "DUNSCAITH_RECORDS__POSTGRESQL__CONNECT_TIMEOUT": "3", **extra}


def _ended(supervisor: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str]:
    code = supervisor.wait(timeout=timeout)
    return code, supervisor.stderr.read() if supervisor.stderr else ""


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    return lines[0]


def _cancel(cli: Cli, job: str, url: str) -> None:
    """The job ran on, Unattended, as it should: cancelled at the end, so that no test's job outlives it."""
    done = cli.run("cancel", job, env=_env(url))
    assert done.returncode == 0, done.stderr


@contextmanager
def _tables_locked(server: PostgresTestServer, database: str) -> Iterator[None]:
    with psycopg.connect(server.url(database)) as other:
        other.execute("LOCK TABLE jobs, events, summaries, snapshots, lock_beats, store_identity "
                      "IN ACCESS EXCLUSIVE MODE")
        yield
        other.rollback()


def test_a_stopped_server_stops_the_supervisor_with_exit_4_and_commands_end_in_one_line(cli: Cli) -> None:
    with private_server() as server:
        url = server.url(server.new_database())
        supervisor = cli.start("submit", "--name", "pg-frozen", "--", "sleep", "600", env=_env(url))
        try:
            await_state_env(cli, "pg-frozen", "running", url)
            with server.frozen():
                status = cli.run("status", "pg-frozen", env=_env(url))
                assert "cannot be reached" in _one_line(status) or "does not answer" in status.stderr
                hold = cli.run("hold", "pg-frozen", env=_env(url))
                assert "cannot be reached" in _one_line(hold) or "does not answer" in hold.stderr
                code, err = _ended(supervisor)  # the server is still stopped
            assert code == 4, err
            assert "did not answer within 10 s" in err and "supervise pg-frozen" in err, err
        finally:
            if supervisor.poll() is None:
                supervisor.kill()
        # the server runs again: the job is Unattended, and nothing was lost or sent twice
        seen = cli.run("status", "pg-frozen", env=_env(url))
        assert seen.returncode == 0 and "Unattended" in seen.stdout + seen.stderr, seen.stderr
        with PostgresStore.open(PostgresTarget.from_settings(url)) as store:
            kinds = [line.kind for line in store.read("pg-frozen").events]  # type: ignore[arg-type]
        assert kinds.count("submitting") == 1 and kinds.count("released") == 1
        _cancel(cli, "pg-frozen", url)


def test_tables_held_by_another_session_stop_the_supervisor_with_exit_4_and_commands_end_in_one_line(
        cli: Cli, postgres_server: PostgresTestServer, postgres_db: str) -> None:
    url = postgres_server.url(postgres_db)
    supervisor = cli.start("submit", "--name", "pg-locked", "--", "sleep", "600", env=_env(url))
    try:
        await_state_env(cli, "pg-locked", "running", url)
        with _tables_locked(postgres_server, postgres_db):
            for args in (["status", "pg-locked"], ["hold", "pg-locked"]):
                line = _one_line(cli.run(*args, env=_env(url)))
                assert "locked by another session" in line, line
            code, err = _ended(supervisor)  # the tables are still locked
        assert code == 4, err
        # its loop reads the record only when told of an append, so what fails first is the record's read or
        # the loop's beat, whichever comes first; either says why
        assert ("record could not be read" in err or "beat of job pg-locked was not recorded" in err) \
            and "locked by another session" in err, err
        assert "supervise pg-locked" in err
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
    seen = cli.run("status", "pg-locked", env=_env(url))
    assert seen.returncode == 0 and "Unattended" in seen.stdout + seen.stderr, seen.stderr
    _cancel(cli, "pg-locked", url)
