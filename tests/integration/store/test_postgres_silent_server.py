"""A PostgreSQL store that accepts connections but never answers (issue 22 item 4), on a real server.

Two faults: every server process stopped (SIGSTOP: the kernel still accepts and acknowledges, so
neither keepalives nor tcp_user_timeout ever fire), and the store's tables held ACCESS EXCLUSIVE by
another session (what VACUUM FULL and LOCK TABLE take). Every call ends within its bound with one
StoreError line; the lock's rules hold: a session that had to be abandoned is a lost lock, one whose
statement the server cancelled cleanly still holds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import psycopg
import pytest

from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget, SessionTimings
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import LockLost, StoreError
from tests.infra.postgres import PostgresTestServer, private_server

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
JOB = JobId("silent-1")
# the client's bound on every answer, 2 s (the server's are within it): the floor lowered, for a short test
TIMINGS = SessionTimings(connect_timeout=2, client_user_timeout=2.0, server_user_timeout=30.0, answer_floor=2.0)


def _open(url: str) -> PostgresStore:
    return PostgresStore.open(PostgresTarget.from_settings(url, timings=TIMINGS))


@contextmanager
def _tables_locked(server: PostgresTestServer, database: str) -> Iterator[None]:
    """Another session holds every table of the store ACCESS EXCLUSIVE until the block ends."""
    with psycopg.connect(server.url(database)) as other:
        other.execute("LOCK TABLE jobs, events, summaries, snapshots, lock_beats, store_identity "
                      "IN ACCESS EXCLUSIVE MODE")
        yield
        other.rollback()


def test_a_stopped_server_ends_every_call_within_its_bound_and_the_holder_loses_its_lock() -> None:
    with private_server() as server:
        url = server.url(server.new_database())
        store = _open(url)
        try:
            store.create(JOB, T0, "created", {})
            with store.lock(JOB) as held:
                held.check()
                with server.frozen():
                    with pytest.raises(StoreError) as read:
                        store.read(JOB)
                    assert "does not answer" in str(read.value) and "within 2 s" in str(read.value)
                    with pytest.raises(StoreError) as status:  # its connection was abandoned: a new one
                        store.summary(JOB)
                    assert "cannot be reached: connection timeout expired" in str(status.value)
                    with pytest.raises(LockLost) as lost:
                        held.check()
                    assert "did not answer within 2 s" in str(lost.value)
                    with pytest.raises(StoreError) as opening:  # a new command cannot even open it
                        _open(url)
                    assert "cannot be reached: connection timeout expired" in str(opening.value)
                # once the server runs again, the abandoned session is gone: another actor takes the lock
                with pytest.raises(LockLost):
                    store.append(JOB, T0, "note", {})
                with _open(url) as other, other.lock(JOB):
                    assert other.append(JOB, T0, "note", {}) == 2
        finally:
            store.close()


def test_tables_held_access_exclusive_end_each_call_with_one_line_and_the_lock_stays_held(
        postgres_server: PostgresTestServer, postgres_db: str) -> None:
    url = postgres_server.url(postgres_db)
    with _open(url) as store:
        store.create(JOB, T0, "created", {})
        with store.lock(JOB) as held, _tables_locked(postgres_server, postgres_db):
            for call in (lambda: store.read(JOB), lambda: store.summary(JOB), store.jobs,
                         lambda: store.append(JOB, T0, "note", {})):
                with pytest.raises(StoreError) as caught:
                    call()
                text = str(caught.value)
                assert "locked by another session" in text and "bound of 1.4 s" in text, text
                assert "\n" not in text
            with pytest.raises(StoreError) as beat:
                held.beat(T0)
            said = str(beat.value)
            assert "beat of job silent-1 was not recorded" in said and "locked by another session" in said
            held.check()  # the server cancelled each statement itself: the session, and the lock, are kept
        assert store.append(JOB, T0, "note", {}) == 2
        assert [line.kind for line in store.read(JOB).events] == ["created", "note"]
