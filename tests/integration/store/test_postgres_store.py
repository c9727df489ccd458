"""PostgresStore against a real PostgreSQL 15: configuration, schema, identity, and the lock's failure paths."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dunscaith.adapters.store.postgres.store import PostgresStore, StoreMoved
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.adapters.store.sql.revisions import HEAD
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import LockBusy, LockLost, RecordDamaged, StoreError
from tests.expect import present
from tests.infra.postgres import PASSWORD, PASSWORD_USER, PostgresTestServer, free_port, private_server

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
JOB = JobId("analysis-1")
REPO = Path(__file__).resolve().parents[3]

OpenStore = Callable[..., PostgresStore]  # opens a store at a URL with the keyword arguments given; closed after


@pytest.fixture
def opened() -> Iterator[OpenStore]:
    """Open a store at a URL, with ``PostgresTarget.from_settings``' keyword arguments; each is closed after."""
    stores: list[PostgresStore] = []

    def _open(url: str, **kwargs: Any) -> PostgresStore:
        store = PostgresStore.open(PostgresTarget.from_settings(url, **kwargs))
        stores.append(store)
        return store

    yield _open
    for store in stores:
        store.close()


@pytest.fixture
def url(postgres_server: PostgresTestServer, postgres_db: str) -> str:
    return postgres_server.url(postgres_db)


def _password_file(tmp_path: Path, text: str = PASSWORD + "\n", mode: int = 0o600) -> Path:
    path = tmp_path / "pg-password"
    path.write_text(text)
    path.chmod(mode)
    return path


# --- configuration and the password ----------------------------------------------------------------


def test_the_password_file_logs_in_and_the_password_shows_nowhere(postgres_server: PostgresTestServer, postgres_db: str,
                                                                  tmp_path: Path, opened: OpenStore) -> None:
    path = _password_file(tmp_path)
    store = opened(postgres_server.url(postgres_db, PASSWORD_USER), password_file=path)
    store.create(JOB, T0, "created", {})
    with store.lock(JOB) as held:
        held.beat(T0)
        shown = " ".join(map(repr, (store, store.target, store.identity(), held, store.health(JOB),
                                    store.read(JOB), store.location())))
    assert PASSWORD not in shown and PASSWORD_USER in store.location()


def test_a_wrong_password_is_one_line_without_the_password_nor_a_traceback(postgres_server: PostgresTestServer,
                                                                           postgres_db: str, tmp_path: Path) -> None:
    path = _password_file(tmp_path, text="not-the-password\n")
    code = (
        "import sys; from pathlib import Path\n"
        "from dunscaith.adapters.store.postgres.store import PostgresStore\n"
        "from dunscaith.adapters.store.postgres.target import PostgresTarget\n"
        f"PostgresStore.open(PostgresTarget.from_settings({postgres_server.url(postgres_db, PASSWORD_USER)!r}, "
        f"password_file=Path({str(path)!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("dunscaith.ports.job_store.StoreError: record store postgresql://secret_user@127.0.0.1")
    assert "password authentication failed" in last
    assert "not-the-password" not in done.stderr + done.stdout


def test_a_traceback_through_an_open_store_never_shows_the_password(postgres_server: PostgresTestServer,
                                                                    postgres_db: str, tmp_path: Path) -> None:
    path = _password_file(tmp_path)
    code = (
        "from pathlib import Path\n"
        "from dunscaith.adapters.store.postgres.store import PostgresStore\n"
        "from dunscaith.adapters.store.postgres.target import PostgresTarget\n"
        f"store = PostgresStore.open(PostgresTarget.from_settings({postgres_server.url(postgres_db, PASSWORD_USER)!r}, "
        f"password_file=Path({str(path)!r})))\n"
        "print(store.identity(), store.location(), repr(store.target), flush=True)\n"
        "import traceback, sys\n"
        "try:\n"
        "    store.read('nobody')\n"
        "except Exception:\n"
        "    traceback.print_exc(); sys.stderr.write(repr(store.__dict__))\n"
        "raise RuntimeError('end')\n"
    )
    done = subprocess.run([sys.executable, "-X", "dev", "-c", code], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert "UnknownJob" in done.stderr and "postgresql://secret_user@" in done.stdout
    assert PASSWORD not in done.stdout + done.stderr


def test_libpqs_own_password_file_is_used_when_records_password_file_is_not_set(
        postgres_server: PostgresTestServer, postgres_db: str, tmp_path: Path, opened: OpenStore,
        monkeypatch: pytest.MonkeyPatch) -> None:
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{postgres_server.port}:*:{PASSWORD_USER}:{PASSWORD}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    store = opened(postgres_server.url(postgres_db, PASSWORD_USER))
    store.create(JOB, T0, "created", {})
    assert store.jobs() == [JOB]


# --- the schema and the store's identity -------------------------------------------------------------


def test_a_new_database_is_migrated_to_head_with_append_only_events(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    store = opened(url)
    store.create(JOB, T0, "created", {})
    assert postgres_server.psql(postgres_db, "SELECT version_num FROM alembic_version") == HEAD
    for sql in ("UPDATE events SET kind = 'x'", "DELETE FROM events", "TRUNCATE events CASCADE"):
        with pytest.raises(RuntimeError, match="append-only"):
            postgres_server.psql(postgres_db, sql)
    assert [e.kind for e in opened(url).read(JOB).events] == ["created"]



@pytest.mark.parametrize("damage", ['{"state":', "[1]"])
def test_a_damaged_row_among_identical_ones_is_reported_at_its_own_seq(postgres_server: PostgresTestServer,
                                                                       postgres_db: str, url: str, opened: OpenStore,
                                                                      damage: str) -> None:
    store = opened(url)
    store.create(JOB, T0, "created", {})
    for _ in range(9):
        store.append(JOB, T0, "seen", {"state": "running"})
    postgres_server.psql(postgres_db, "SET session_replication_role = replica; "  # past the append-only trigger
                         f"UPDATE events SET data = '{damage}' WHERE seq = 7")
    with pytest.raises(RecordDamaged) as caught:
        store.read(JOB)
    assert caught.value.job == JOB and caught.value.event == 7

def test_a_store_written_by_a_newer_schema_is_refused_naming_both_versions_and_left_as_it_was(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    opened(url).create(JOB, T0, "created", {})
    postgres_server.psql(postgres_db, "UPDATE alembic_version SET version_num = '0042'")
    with pytest.raises(StoreError) as caught:
        opened(url)
    message = str(caught.value)
    assert "newer dunscaith" in message and "schema 0042" in message and f"up to {HEAD}" in message
    assert postgres_server.psql(postgres_db, "SELECT version_num FROM alembic_version") == "0042"
    assert postgres_server.psql(postgres_db, "SELECT count(*) FROM events") == "1"


def test_another_programs_database_is_refused_and_not_migrated(postgres_server: PostgresTestServer, postgres_db: str,
                                                               url: str, opened: OpenStore) -> None:
    postgres_server.psql(postgres_db, "CREATE TABLE theirs (x int)")
    with pytest.raises(StoreError, match="not a dunscaith record store"):
        opened(url)
    assert postgres_server.psql(postgres_db, "SELECT to_regclass('alembic_version') IS NULL") == "t"


def test_two_openers_at_once_migrate_once_and_both_open(url: str) -> None:
    stores: list[PostgresStore] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            stores.append(PostgresStore.open(PostgresTarget.from_settings(url)))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == [] and len(stores) == 4
        stores[0].create(JOB, T0, "created", {})
        assert stores[3].jobs() == [JOB]
    finally:
        for s in stores:
            s.close()


def test_a_store_copied_into_another_database_is_refused_naming_both(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    store = opened(url)
    postgres_server.psql(postgres_db, "UPDATE store_identity SET database = 'elsewhere', system_identifier = '42'")
    store.close()
    with pytest.raises(StoreMoved) as caught:
        opened(url)
    message = str(caught.value)
    assert "database elsewhere" in message and "identifier 42" in message and postgres_db in message


def test_a_server_that_is_down_at_open_is_one_line_naming_the_store() -> None:
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/records"
    with pytest.raises(StoreError) as caught:
        PostgresStore.open(PostgresTarget.from_settings(url))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"record store {url} cannot be reached")
    assert "Connection refused" in message


# --- the lock ------------------------------------------------------------------------------------------


def test_the_lock_is_a_session_advisory_lock_on_a_connection_of_its_own(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    store = opened(url)
    with store.lock(JOB) as held:
        rows = postgres_server.psql(postgres_db, "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted")
        assert rows.split() == [str(held.pid)]
        general = postgres_server.psql(
            postgres_db, f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{postgres_db}' "
                         "AND application_name = 'dunscaith'")
        assert general == "2"  # the store's general connection and the lock's own
    assert postgres_server.psql(postgres_db, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == "0"


def test_a_processs_many_locks_share_one_session_each_its_own_key_seen_by_others_as_a_jobs(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    holder, other = opened(url), opened(url)
    jobs = [JobId(f"sweep-{i}") for i in range(1, 151)]  # more than a server's default max_connections (100)
    for job in jobs:
        holder.create(job, T0, "created", {})
    with contextlib.ExitStack() as stack:
        locks = [stack.enter_context(holder.lock(job)) for job in jobs]
        assert {lock.pid for lock in locks} == {locks[0].pid}
        connections = postgres_server.psql(
            postgres_db, f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{postgres_db}' "
                         "AND application_name = 'dunscaith'")
        assert connections == "3"  # each store's general connection and the holder's one lock session
        keys = postgres_server.psql(postgres_db, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                                                 f"AND granted AND pid = {locks[0].pid}")
        assert keys == "150"
        for job in jobs[:3]:
            with pytest.raises(LockBusy), other.lock(job):
                pass
        for i, lock in enumerate(locks[:3]):
            lock.check()
            lock.beat(T0)
            assert holder.append(jobs[i], T0, "note", {"by": "holder"}) == 2
        stack.close()  # every lock given back, the session ended with the last
    assert postgres_server.psql(postgres_db, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == "0"
    with other.lock(jobs[0]):
        pass


def test_locking_keeps_one_session_for_locks_taken_one_after_the_other_and_a_dropped_one_is_made_anew(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    holder, other = opened(url), opened(url)
    jobs = [JobId(f"one-by-one-{i}") for i in range(3)]

    def sessions() -> str:
        return postgres_server.psql(postgres_db, f"SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                                 f"'{postgres_db}' AND application_name = 'dunscaith'")

    with holder.locking():
        pids = []
        for job in jobs:
            with holder.lock(job) as held:
                pids.append(held.pid)
            with other.lock(job):  # given back at once, as outside
                pass
        assert len(set(pids)) == 1
        assert sessions() == "3"  # each store's general connection and the holder's kept session (other's
        # ended with its lock, as every session does outside ``locking``)
        postgres_server.psql(postgres_db, f"SELECT pg_terminate_backend({pids[0]})")  # dropped while idle
        with holder.lock(jobs[0]) as again:  # nothing was held on it: a new session, the lock taken
            assert again.pid != pids[0]
            with pytest.raises(LockBusy), other.lock(jobs[0]):
                pass
    assert postgres_server.psql(postgres_db, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == "0"
    assert sessions() == "2"  # the kept session ended with the block


def test_one_lock_given_back_frees_its_key_only_and_the_others_stay_held(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    holder, other = opened(url), opened(url)
    first, second = JobId("given-back-1"), JobId("kept-2")
    with holder.lock(second) as kept:
        with holder.lock(first):
            pass
        with other.lock(first) as taken:  # free on the server as soon as it was given back
            taken.check()
        kept.check()
        with pytest.raises(LockBusy), other.lock(second):
            pass


def test_a_terminated_shared_session_loses_every_lock_on_it_and_a_later_lock_starts_a_new_one(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    holder, other = opened(url), opened(url)
    jobs = [JobId(f"cut-{i}") for i in range(1, 4)]
    for job in jobs:
        holder.create(job, T0, "created", {})
    with contextlib.ExitStack() as stack:
        locks = [stack.enter_context(holder.lock(job)) for job in jobs]
        locks[0].check()
        postgres_server.psql(postgres_db, f"SELECT pg_terminate_backend({locks[0].pid})")
        with pytest.raises(LockLost, match="lost"):
            locks[0].check()
        with pytest.raises(LockLost, match="lock of job cut-2 is lost"):
            locks[1].beat(T0)  # learnt from the first one's loss, without asking the server
        with pytest.raises(LockLost):
            holder.append(jobs[2], T0, "note", {})  # a write under a lost lock never goes over another session
        for job in jobs:
            with other.lock(job):  # every key is free on the server
                pass
        with holder.lock(JobId("later-1")) as later:  # a new session; the lost locks are not on it
            later.check()
            assert later.pid != locks[0].pid
            with pytest.raises(LockLost):
                locks[2].check()
    assert [e.seq for e in holder.read(jobs[2]).events] == [1]


def test_a_terminated_session_loses_the_lock_for_good_and_another_actor_takes_it(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    holder, other = opened(url), opened(url)
    holder.create(JOB, T0, "created", {})
    with holder.lock(JOB) as held:
        held.check()
        assert holder.append(JOB, T0, "note", {"by": "holder"}) == 2
        postgres_server.psql(postgres_db, f"SELECT pg_terminate_backend({held.pid})")
        with pytest.raises(LockLost, match="lost"):
            held.check()
        with other.lock(JOB) as taken:  # free on the server at once
            taken.check()
            assert other.append(JOB, T0, "note", {"by": "other"}) == 3
            # the old holder's writes went over its own session: they fail, never land beside the new holder's
            with pytest.raises(LockLost):
                holder.append(JOB, T0, "note", {"by": "holder, late"})
            with pytest.raises(LockLost):
                held.beat(T0)
            with pytest.raises(LockLost):
                held.check()  # never reconnected, never retaken
    assert [e.data for e in other.read(JOB).events[1:]] == [{"by": "holder"}, {"by": "other"}]


def test_a_write_of_the_holder_that_was_cut_off_never_goes_over_another_connection(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    holder = opened(url)
    holder.create(JOB, T0, "created", {})
    with holder.lock(JOB) as held:
        postgres_server.psql(postgres_db, f"SELECT pg_terminate_backend({held.pid})")
        with pytest.raises(LockLost):
            holder.append(JOB, T0, "note", {})
    assert [e.seq for e in holder.read(JOB).events] == [1]  # the general connection still reads


def test_health_is_seen_from_another_handle_and_a_beat_outlives_the_lock(url: str, opened: OpenStore) -> None:
    holder, watcher = opened(url), opened(url)
    with holder.lock(JOB) as held:
        held.beat(T0 + timedelta(seconds=5))
        health = watcher.health(JOB)
        assert health.held and health.last_loop == T0 + timedelta(seconds=5)
        with pytest.raises(LockBusy), watcher.lock(JOB):
            pass
    health = watcher.health(JOB)
    assert not health.held and health.last_loop == T0 + timedelta(seconds=5)


HOLDER = """
import sys
from datetime import datetime, UTC
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
store = PostgresStore.open(PostgresTarget.from_settings(sys.argv[1]))
with store.lock("analysis-1") as held:
    for i in range(10**6):
        store.append("analysis-1", datetime.now(UTC), "note", {"by": "child", "i": i})
        if i == 5:
            print("held", flush=True)
"""


def test_a_holder_killed_with_sigkill_lets_another_process_take_the_lock_at_once_and_carry_on(
        url: str, opened: OpenStore) -> None:
    store = opened(url)
    store.create(JOB, T0, "created", {})
    child = subprocess.Popen([sys.executable, "-c", HOLDER, url], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert present(child.stdout).readline() == "held\n"
        with pytest.raises(LockBusy), store.lock(JOB):
            pass
    finally:
        child.kill()
        child.wait()
    killed = time.monotonic()
    while True:  # the server ends the session as the kernel closes the socket: no timeout involved
        try:
            with store.lock(JOB) as held:
                took = time.monotonic() - killed
                held.check()
                seq = store.append(JOB, T0, "note", {"by": "taker"})
                break
        except LockBusy:
            assert time.monotonic() - killed < 5, "the lock of a killed holder was not freed"
            time.sleep(0.01)
    record = store.read(JOB)
    assert [e.seq for e in record.events] == list(range(1, seq + 1))
    assert record.events[-1].data == {"by": "taker"}
    print(f"takeover after SIGKILL: {took * 1000:.0f} ms")


def test_fifty_concurrent_appenders_and_the_holder_lose_no_event(url: str, opened: OpenStore) -> None:
    opened(url).create(JOB, T0, "created", {})
    holder = opened(url)
    writers = [PostgresStore.open(PostgresTarget.from_settings(url)) for _ in range(50)]
    start = threading.Barrier(51)
    failures: list[BaseException] = []

    def append_many(store: PostgresStore, who: str) -> None:
        try:
            start.wait()
            for i in range(10):
                store.append(JOB, T0, "request", {"by": who, "i": i})
        except BaseException as exc:
            failures.append(exc)

    try:
        with holder.lock(JOB):
            threads = [threading.Thread(target=append_many, args=(w, f"w{n}")) for n, w in enumerate(writers)]
            for t in threads:
                t.start()
            start.wait()
            for i in range(50):
                holder.append(JOB, T0, "note", {"by": "holder", "i": i})
            for t in threads:
                t.join()
    finally:
        for w in writers:
            w.close()
    assert failures == []
    events = opened(url).read(JOB).events
    assert [e.seq for e in events] == list(range(1, 1 + 1 + 500 + 50))
    seen = {(e.data["by"], e.data["i"]) for e in events[1:]}
    assert len(seen) == 550


def test_a_server_restart_loses_every_held_lock_and_the_holder_says_so(tmp_path: Path) -> None:
    with private_server() as server:
        db = server.new_database()
        url = server.url(db)
        store = PostgresStore.open(PostgresTarget.from_settings(url))
        try:
            store.create(JOB, T0, "created", {})
            with store.lock(JOB) as held:
                held.check()
                server.restart()
                with pytest.raises(LockLost) as caught:
                    held.check()
                assert "session to the server ended" in str(caught.value)
                with pytest.raises(LockLost):
                    store.append(JOB, T0, "note", {})
                # the general connection reconnects (no lock lives on it): reads and others' writes go on
                assert [e.seq for e in store.read(JOB).events] == [1]
                with PostgresStore.open(PostgresTarget.from_settings(url)) as other, other.lock(JOB):
                    assert other.append(JOB, T0, "note", {}) == 2
        finally:
            store.close()


def test_connections_carry_the_documented_keepalive_and_user_timeout_settings(postgres_server: PostgresTestServer,
                                                                              url: str, opened: OpenStore) -> None:
    store = opened(url)
    with store.lock(JOB) as held:
        conn = held._conn  # the lock's own session
        shown = {name: present(conn.execute(f"SHOW {name}").fetchone())[0]
                 for name in ("tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count",
                              "tcp_user_timeout", "idle_session_timeout", "synchronous_commit",
                              "statement_timeout", "lock_timeout")}
        assert shown == {"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "6",
                         "tcp_user_timeout": "300000", "idle_session_timeout": "0", "synchronous_commit": "on",
                         "statement_timeout": "8s", "lock_timeout": "7s"}
        params = conn.info.get_parameters()
        assert params["keepalives"] == "1" and params["tcp_user_timeout"] == "10000"
        assert params["keepalives_idle"] == "5"



FROZEN = """
import sys
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.ports.job_store import LockLost
store = PostgresStore.open(PostgresTarget.from_settings(sys.argv[1]))
with store.lock("analysis-1") as held:
    print(held.pid, flush=True)
    sys.stdin.readline()  # frozen here by the test, then woken
    try:
        held.check()
        print("still held", flush=True)
    except LockLost as exc:
        print("lost:", exc, flush=True)
"""


def test_a_frozen_holder_keeps_its_lock_until_its_session_is_ended_and_then_finds_it_lost(
        postgres_server: PostgresTestServer, postgres_db: str, url: str, opened: OpenStore) -> None:
    """idle_session_timeout is off (docs/record-backing.md): a stopped supervisor blocks a takeover rather
    than wake up to send a request it had checked for while another supervisor acts."""
    store = opened(url)
    child = subprocess.Popen([sys.executable, "-c", FROZEN, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, cwd=REPO)
    try:
        pid = int(present(child.stdout).readline())
        child.send_signal(signal.SIGSTOP)
        assert store.health(JOB).held
        with pytest.raises(LockBusy), store.lock(JOB):
            pass
        postgres_server.psql(postgres_db, f"SELECT pg_terminate_backend({pid})")  # what an administrator does
        while store.health(JOB).held:
            time.sleep(0.01)
        with store.lock(JOB) as taken:
            taken.check()
            child.send_signal(signal.SIGCONT)
            present(child.stdin).write("wake\n")
            present(child.stdin).flush()
            answer = present(child.stdout).readline()
            assert answer.startswith("lost:") and "session to the server ended" in answer
    finally:
        child.send_signal(signal.SIGCONT)
        child.kill()
        child.wait()


def test_a_store_of_schema_0001_gets_every_summary_folded_from_its_events_on_open(postgres_server: PostgresTestServer,
                                                                                  opened: OpenStore) -> None:
    import psycopg

    from dunscaith.domain.model.jobs import events as ev
    from dunscaith.domain.model.jobs.ids import Nonce
    from dunscaith.domain.model.jobs.record import StoreIdentity
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.model.jobs.state import fold
    from dunscaith.domain.model.jobs.summary import SummaryQuery, summarize

    url = postgres_server.url(postgres_server.new_database())
    store = opened(url)
    for i in range(3):
        job = JobId(f"job-{i}")
        store.create(job, T0, *ev.encode(ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)),
                                                           StoreIdentity("postgresql", "x"))))
        for n in range(i):
            store.append(job, T0, *ev.encode(ev.Submitting(n + 1, Nonce("n"))))
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:  # as revision 0001 left it: no summaries, no snapshots
        conn.execute("DROP TABLE summaries")
        conn.execute("DROP TABLE snapshots")
        conn.execute("ALTER TABLE lock_beats DROP COLUMN next_loop")  # as 0001 left it (0004 adds it)
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
    store = opened(url)
    listed = {s.job: s for s in store.summaries(SummaryQuery())}
    assert set(listed) == {"job-0", "job-1", "job-2"}
    for i in range(3):
        job = JobId(f"job-{i}")
        assert listed[job] == summarize(fold(store.read(job)), i + 1, job)
    assert [s.job for s in store.unsettled()] == ["job-0", "job-1", "job-2"]


def test_a_store_of_schema_0004_gains_the_sweep_columns_on_open_and_keeps_every_summary(
        postgres_server: PostgresTestServer, opened: OpenStore) -> None:
    import psycopg

    from dunscaith.domain.model.jobs import events as ev
    from dunscaith.domain.model.jobs.record import StoreIdentity
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.model.jobs.state import fold
    from dunscaith.domain.model.jobs.summary import SummaryQuery, summarize
    from dunscaith.domain.model.jobs.sweeps import SweepMember

    url = postgres_server.url(postgres_server.new_database())
    where = StoreIdentity("postgresql", "x")
    plain = [JobId(f"job-{i}") for i in range(3)]
    store = opened(url)
    for job in plain:
        store.create(job, T0, *ev.encode(ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)), where)))
    element = JobSpec(JobId("exp-4"), "local", "local", ("true",), member=SweepMember(JobId("exp"), 4, None))
    store.create(element.name, T0, *ev.encode(ev.JobRecorded.of(element, where)))
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:  # as revision 0004 left it: no sweep columns
        conn.execute("DROP INDEX ix_summaries_sweep")
        conn.execute("ALTER TABLE summaries DROP COLUMN sweep_index")
        conn.execute("ALTER TABLE summaries DROP COLUMN sweep")
        conn.execute("UPDATE alembic_version SET version_num = '0004'")
    store = opened(url)
    listed = {s.job: s for s in store.summaries(SummaryQuery())}
    for job in [*plain, element.name]:
        assert listed[job] == summarize(fold(store.read(job)), 1, job)
    assert [(s.job, s.sweep, s.sweep_index) for s in store.summaries(SummaryQuery(sweep="exp"))] == [
        ("exp-4", "exp", 4)]
    assert store.count(SummaryQuery(sweep="exp")) == 1
    assert all(listed[job].sweep is None for job in plain)
