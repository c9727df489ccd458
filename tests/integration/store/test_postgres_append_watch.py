"""The PostgreSQL store's watch of appends (LISTEN/NOTIFY) on a real PostgreSQL 15: what wakes it, and what
it does when its connection is lost."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from dunscaith.adapters.store.postgres.append_watch import PgAppendWatch, channel
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import StoreError
from tests.infra.postgres import PostgresTestServer, PostgresUnavailable, pgbouncer

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

JOB = JobId("watched-1")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Woken:
    """Counts wakes; ``wait_for(n)`` until the n-th (the watch calls from its own thread)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.count = 0

    def __call__(self) -> None:
        with self._cond:
            self.count += 1
            self._cond.notify_all()

    def wait_for(self, n: int, timeout: float = 30.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.count >= n, timeout)


@pytest.fixture
def url(postgres_server: PostgresTestServer, postgres_db: str) -> str:
    return postgres_server.url(postgres_db)


@pytest.fixture
def store(url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore.open(PostgresTarget.from_settings(url))
    opened.create(JOB, T0, "created", {})
    try:
        yield opened
    finally:
        opened.close()


def _listeners(url: str) -> list[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %%' "
                            "AND pid <> pg_backend_pid()").fetchall()
    return [int(pid) for (pid,) in rows]


def test_a_listening_connection_killed_on_the_server_says_so_then_listens_again_and_wakes(
        store: PostgresStore, url: str) -> None:
    woke = Woken()
    watch = store.watch_appends(JOB, woke)
    try:
        assert watch.live()
        (pid,) = _listeners(url)
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert woke.wait_for(1), "the lost connection did not wake the holder"
        # told at once (before any reconnect) or back already: either way the wake came with the change
        assert woke.wait_for(2), "the watch did not listen again and wake its holder"
        assert watch.live()
        (again,) = _listeners(url)
        assert again != pid
        with PostgresStore.open(PostgresTarget.from_settings(url)) as other:  # another login node's command
            other.append(JOB, T0 + timedelta(seconds=1), "request", {"request": "r-1"})
        assert woke.wait_for(3), "an append after the reconnect did not wake the holder"
    finally:
        watch.close()
    assert _listeners(url) == []  # closing ends its session


def test_while_the_server_is_unreachable_the_watch_is_not_live_and_the_holder_is_told(url: str) -> None:
    """A watch whose every reconnect fails stays not live (its holder reads every poll), and never raises."""
    reached = PostgresTarget.from_settings(url)
    attempts = 0

    def connect() -> psycopg.Connection[object]:
        nonlocal attempts
        attempts += 1
        if attempts > 1:
            raise psycopg.OperationalError("connection refused")
        return psycopg.connect(reached.url, autocommit=True, **reached.connect_kwargs())

    woke = Woken()
    watch = PgAppendWatch(connect, JOB, "test store", woke, first_backoff=0.01)
    try:
        (pid,) = _listeners(url)
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert woke.wait_for(1)
        assert not watch.live()
    finally:
        watch.close()


def test_the_holders_own_appends_notify_no_one_and_anothers_notify_the_jobs_channel_only(
        store: PostgresStore, url: str) -> None:
    with psycopg.connect(url, autocommit=True) as listener:
        listener.execute(f"LISTEN {channel(JOB)}")
        listener.execute(f"LISTEN {channel(JobId('other-1'))}")
        with store.lock(JOB):
            store.append(JOB, T0 + timedelta(seconds=1), "observed", {})
        assert list(listener.notifies(timeout=0.5)) == []
        with PostgresStore.open(PostgresTarget.from_settings(url)) as other:
            other.append(JOB, T0 + timedelta(seconds=2), "request", {"request": "r-1"})
        (told,) = list(listener.notifies(timeout=5, stop_after=1))
        assert told.channel == channel(JOB) and told.payload == ""


def test_a_channel_is_a_short_identifier_whatever_the_jobs_name() -> None:
    for name in ("a", "x" * 255, 'quote"and space; DROP', "ünïcode-名前"):
        made = channel(JobId(name))
        assert len(made) <= 63 and made.isascii() and made.replace("_", "").isalnum() and made.islower()
    assert channel(JobId("a")) != channel(JobId("b"))


def test_a_listening_connection_through_a_transaction_pooler_is_refused_in_one_line(
        postgres_server: PostgresTestServer, postgres_db: str) -> None:
    try:
        bouncer = pgbouncer(postgres_server, "transaction")
        address = bouncer.__enter__()
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    try:
        target = PostgresTarget.from_settings(f"postgresql://dunscaith@{address}/{postgres_db}")
        with pytest.raises(StoreError) as refused:
            PgAppendWatch(lambda: psycopg.connect(target.url, autocommit=True, **target.connect_kwargs()),
                          JOB, target.location(), Woken())
        line = str(refused.value)
        assert "pooler" in line and "LISTEN" in line and "\n" not in line
    finally:
        bouncer.__exit__(None, None, None)


def test_a_processs_watches_share_one_listening_connection_and_each_is_woken_by_its_own_jobs_appends(
        store: PostgresStore, url: str) -> None:
    jobs = [JobId(f"element-{i}") for i in range(1, 151)]  # more than a server's default max_connections
    woken = {job: Woken() for job in jobs}
    watches = [store.watch_appends(job, woken[job]) for job in jobs]
    try:
        assert all(watch.live() for watch in watches)
        (pid,) = _listeners(url)  # one connection for all of them
        with PostgresStore.open(PostgresTarget.from_settings(url)) as other:  # another login node's command
            for job in (jobs[6], jobs[149]):
                other.create(job, T0, "created", {})
                other.append(job, T0 + timedelta(seconds=1), "request", {"request": "r-1"})
        assert woken[jobs[6]].wait_for(1) and woken[jobs[149]].wait_for(1)
        assert [job for job in jobs if woken[job].count] == [jobs[6], jobs[149]]

        with psycopg.connect(url, autocommit=True) as admin:  # the shared connection lost: every watch told
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert all(woken[job].wait_for(2 if job in (jobs[6], jobs[149]) else 1) for job in jobs)
        assert all(woken[job].wait_for(3 if job in (jobs[6], jobs[149]) else 2) for job in jobs), \
            "the shared connection did not listen again and wake every watch"
        (again,) = _listeners(url)
        assert again != pid and all(watch.live() for watch in watches)
        before = woken[jobs[0]].count
        with PostgresStore.open(PostgresTarget.from_settings(url)) as other:
            other.append(jobs[6], T0 + timedelta(seconds=2), "request", {"request": "r-2"})
            other.create(jobs[0], T0, "created", {})
            other.append(jobs[0], T0 + timedelta(seconds=2), "request", {"request": "r-3"})
        assert woken[jobs[0]].wait_for(before + 1), "a channel listened to again was not told"
        for watch in watches[:-1]:
            watch.close()
        assert _listeners(url) == [again]  # the last watch keeps it
    finally:
        for watch in watches:
            watch.close()
    assert _listeners(url) == []  # the last one closed ends its session


def test_a_watch_begun_while_the_shared_connection_is_made_anew_is_listened_to_once_it_is_back(
        store: PostgresStore, url: str) -> None:
    first, later = JobId("first-1"), JobId("later-2")
    woke_first, woke_later = Woken(), Woken()
    watch = store.watch_appends(first, woke_first)
    try:
        (pid,) = _listeners(url)
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert woke_first.wait_for(1)
        added = store.watch_appends(later, woke_later)  # lost or back already: either way it is listened to
        try:
            assert woke_first.wait_for(2), "the shared connection did not come back"
            assert added.live()
            before = woke_later.count
            with PostgresStore.open(PostgresTarget.from_settings(url)) as other:
                other.create(later, T0, "created", {})
                other.append(later, T0 + timedelta(seconds=1), "request", {"request": "r-1"})
            assert woke_later.wait_for(before + 1), "the later watch was not told of its job's append"
        finally:
            added.close()
    finally:
        watch.close()
