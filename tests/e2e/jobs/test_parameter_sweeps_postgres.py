"""A parameter sweep on a PostgreSQL store that two login nodes share: recorded at once, supervised by one
process (a lock and a connection per element it holds), kill -9 of that process, then supervise NAME."""

from __future__ import annotations

import json
import signal
from collections import Counter

import pytest

from tests.e2e.jobs.cli import Cli, await_condition
from tests.infra.postgres import PostgresTestServer

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def url(postgres_server: PostgresTestServer, postgres_db: str) -> str:
    return postgres_server.url(postgres_db)


def _env(url: str) -> dict[str, str]:
    return {"DUNSCAITH_RECORDS__BACKEND": "postgresql", "DUNSCAITH_RECORDS__URL": url}


def _ran(cli: Cli) -> Counter[str]:
    path = cli.tmp / "ran"
    return Counter(path.read_text().split()) if path.exists() else Counter()


def test_a_sweep_on_postgresql_runs_every_element_once_and_reattaches_after_kill_9(cli: Cli, url: str) -> None:
    command = ["sh", "-c", f"echo {{}} >> {cli.tmp / 'ran'}; sleep 0.2"]
    first = cli.run("submit", "--name", "pgs", "--array", "1-10", "--max-running", "3", "--", *command,
                    env=_env(url), DUNSCAITH_TEST_CRASH_AT="release-committed#4")
    assert first.returncode == -signal.SIGKILL, first.stderr
    shown = cli.run("status", "pgs", "--json", env=_env(url))
    assert shown.returncode in (0, 1), shown.stderr
    assert len(json.loads(shown.stdout)["elements"]) == 10
    again = cli.run("supervise", "pgs", env=_env(url))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "sweep pgs: all 10 succeeded" in again.stdout
    assert _ran(cli) == Counter(str(i) for i in range(1, 11))
    listed = cli.run("list", env=_env(url))
    assert listed.returncode == 0 and "pgs" in listed.stdout and "sweep of 10: succeeded" in listed.stdout


@pytest.mark.slurm
def test_a_sweep_of_40_elements_holds_them_all_on_one_lock_session_and_one_listening_connection(
        on_slurm: Cli, url: str, postgres_server: PostgresTestServer, postgres_db: str) -> None:
    """A connection per element's lock and another per element's watch would be 80 here, and 1,000 for a
    500-element sweep: more than a default server's 100, shared by every user. One session and one listening
    connection, whatever the size, is what is asserted (40 elements keep the test to CI's budget)."""
    go = on_slurm.tmp / "go"
    command = ["sh", "-c", f"while [ ! -e {go} ]; do sleep 0.2; done; echo {{}} >> {on_slurm.tmp / 'ran'}"]
    supervisor = on_slurm.start("submit", "--cluster", "test", "--name", "wide", "--array", "1-40", "--",
                                *command, env=_env(url))
    try:
        def held() -> str:
            return postgres_server.psql(postgres_db, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                                                     "AND granted")

        # every element's lock, and the sweep's own (one supervisor per sweep: sweep_lock.py)
        await_condition(lambda: held() == "41", timeout=120, what="every element's lock and the sweep's held")
        connections = postgres_server.psql(
            postgres_db, f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{postgres_db}' "
                         "AND application_name = 'dunscaith'")
        sessions = postgres_server.psql(postgres_db, "SELECT count(DISTINCT pid) FROM pg_locks "
                                                     "WHERE locktype = 'advisory' AND granted")
        assert sessions == "1"  # every element's key and the sweep's held by one session
        assert int(connections) <= 3  # its general connection, the lock session, the listening connection
        go.touch()
        out, err = supervisor.communicate(timeout=600)
    finally:
        go.touch()
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
    assert supervisor.returncode == 0, out + err
    assert "sweep wide: all 40 succeeded" in out
    assert _ran(on_slurm) == Counter(str(i) for i in range(1, 41))
