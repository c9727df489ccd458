"""Snapshots on the real SQL stores, failure paths first: what ``status`` reports when the record, or its
snapshot, was damaged after the snapshot was made.

The stores here keep a snapshot every four events; the job has 13 (the snapshot covers 1..12). The
damage is done past the append-only triggers, as a disk or a hand would. What status says is what
``JobStatus.one`` raises or returns, the line the CLI prints from it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.record import HostIdentity, StoreIdentity
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import JobState, fold
from dunscaith.domain.model.version import VERSION
from dunscaith.domain.services.jobs.doctor import Doctor
from dunscaith.domain.services.jobs.status import JobStatus
from dunscaith.ports.job_store import JobStore, RecordDamaged, StoreError

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
JOB = JobId("long")
EVERY = 4
STORY: list[ev.Event] = [ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("o1")), ev.Confirmed(1, ObjectId("o1")),
         ev.Released(1, ObjectId("o1")),
         *(ev.Observed(1, ObjectId("o1"), ("pending", "running")[i % 2], None, None, "") for i in range(8))]


@dataclass
class Sql:
    open: Callable[..., JobStore]  # a new handle (keyword: snapshot_every)
    run: Callable[[str], None]  # SQL past the append-only triggers, committed


def _sqlite(tmp_path: Path, request: pytest.FixtureRequest) -> Sql:
    root = tmp_path / "records"

    def run(sql: str) -> None:
        conn = sqlite3.connect(root / "records.db")
        conn.execute("DROP TRIGGER IF EXISTS events_append_only_update")
        conn.execute("DROP TRIGGER IF EXISTS events_append_only_delete")
        conn.executescript(sql)
        conn.commit()
        conn.close()

    return Sql(lambda **kw: SqliteStore.open(root, SystemHost(), **kw), run)


def _postgresql(tmp_path: Path, request: pytest.FixtureRequest) -> Sql:
    server = request.getfixturevalue("postgres_server")
    database = server.new_database()
    url = server.url(database)
    return Sql(lambda **kw: PostgresStore.open(PostgresTarget.from_settings(url), **kw),
               lambda sql: server.psql(database, f"SET session_replication_role = replica; {sql}"))


@pytest.fixture(params=[pytest.param("sqlite"),
                        pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow])])
def sql(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Sql]:
    opened: list[Any] = []
    made = (_sqlite if request.param == "sqlite" else _postgresql)(tmp_path, request)
    real = made.open

    def keep(**kw: Any) -> JobStore:
        store = real(**kw)
        opened.append(store)
        return store

    made.open = keep
    yield made
    for store in opened:
        store.close()


def _long(store: JobStore, story: list[ev.Event] = STORY) -> None:
    store.create(JOB, T0, *ev.encode(ev.JobRecorded.of(JobSpec(JOB, "local", "local", ("true",)), store.identity())))
    for i, event in enumerate(story, start=1):
        store.append(JOB, T0 + timedelta(seconds=i), *ev.encode(event))


def _status(store: JobStore) -> JobState:
    return JobStatus(store, FakeClock(T0), poll=30.0).one(JOB).state


def _built(sql: Sql) -> JobStore:
    store = sql.open(snapshot_every=EVERY)
    _long(store)
    tail = store.read_tail(JOB)
    assert tail.after == 12 and [line.seq for line in tail.events] == [13] and tail.snapshot is not None
    assert _status(store) == fold(store.read(JOB))
    return store


# --- an event damaged before the snapshot: reported at its own seq, as without snapshots --------------

@pytest.mark.parametrize("damage", ['{"state":', "[1]", "null", ""])
def test_an_event_the_snapshot_covers_that_is_no_longer_json_is_reported_at_its_own_seq(sql: Sql, damage: str) -> None:
    _built(sql)
    sql.run(f"UPDATE events SET data = '{damage}' WHERE seq = 7")
    with pytest.raises(RecordDamaged) as caught:  # no longer vouched for: the whole record is read
        sql.open().read_tail(JOB)
    assert caught.value.event == 7
    with pytest.raises(RecordDamaged) as caught:
        _status(sql.open())
    assert caught.value.event == 7 and caught.value.job == JOB


def test_an_event_missing_under_the_snapshot_is_reported_at_its_seq(sql: Sql) -> None:
    store = _built(sql)
    sql.run("DELETE FROM events WHERE seq = 3")
    with pytest.raises(RecordDamaged, match="event 3 is missing") as caught:
        _status(store)
    assert caught.value.event == 3


def test_an_event_after_the_snapshot_that_does_not_read_is_reported_at_its_own_seq(sql: Sql) -> None:
    store = _built(sql)
    sql.run("UPDATE events SET data = '[1]' WHERE seq = 13")
    with pytest.raises(RecordDamaged) as caught:
        _status(store)
    assert caught.value.event == 13


def test_an_event_the_snapshot_covers_changed_into_another_json_object_is_found_by_doctor(sql: Sql) -> None:
    # The one change a snapshot hides from status (docs/record-backing.md): an event it covers rewritten
    # into another JSON object. Events are append-only (triggers), so that is a hand past them or a flip
    # inside a text; doctor folds every record whole and says so, and its rebuild drops the snapshot.
    store = _built(sql)
    changed = json.dumps({"attempt": 1, "object_id": "o1", "state": "sleeping", "exit_code": None, "signal": None,
                          "reason": ""})
    sql.run(f"UPDATE events SET data = '{changed}' WHERE seq = 7")
    report = Doctor(lambda: store, lambda _: None, InMemoryPointers(), InMemoryResidualList(),
                    HostIdentity("m", "h"))()
    assert any(f.subject == f"job {JOB}" and "does not read" in (f.problem or "") for f in report.findings)
    store.rebuild_summaries()
    with pytest.raises(Exception, match="sleeping"):
        _status(sql.open())


# --- the snapshot itself damaged, or another build's: the whole record is folded ----------------------

@pytest.mark.parametrize("change", [
    "data = 'not json'", "data = '[]'", f"""data = replace(data, '"version":"{VERSION}"', '"version":"0.0.1"')""",
    "seq = 8", """data = replace(data, '"attempts":[[', '"attempts":[["x",')""",
], ids=["not-json", "not-an-object", "another-version", "another-seq", "does-not-decode"])
def test_a_damaged_or_foreign_snapshot_is_ignored_and_status_is_the_whole_fold(sql: Sql, change: str) -> None:
    _built(sql)
    sql.run(f"UPDATE snapshots SET {change}")
    fresh = sql.open(snapshot_every=EVERY)
    assert _status(fresh) == fold(fresh.read(JOB))
    fresh.rebuild_summaries()  # doctor: made again from the events
    assert fresh.read_tail(JOB).after == 12 and _status(fresh) == fold(fresh.read(JOB))


def test_a_snapshot_row_gone_is_only_a_slower_status_and_doctor_makes_it_again(sql: Sql) -> None:
    store = _built(sql)
    sql.run("DELETE FROM snapshots")
    assert store.read_tail(JOB).after == 0 and _status(store) == fold(store.read(JOB))
    store.rebuild_summaries()
    assert store.read_tail(JOB).after == 12


# --- one transaction: no event without its due snapshot ------------------------------------------------

def test_an_append_whose_snapshot_cannot_be_written_is_not_recorded(sql: Sql, request: pytest.FixtureRequest) -> None:
    store = sql.open(snapshot_every=EVERY)
    _long(store, STORY[:6])  # events 1..7, a snapshot at 4
    if request.node.callspec.params["sql"] == "sqlite":
        sql.run("CREATE TRIGGER no_room BEFORE INSERT ON snapshots WHEN NEW.seq >= 8 "
                "BEGIN SELECT RAISE(ABORT, 'no room'); END")
    else:
        sql.run("ALTER TABLE snapshots ADD CONSTRAINT no_room CHECK (seq < 8)")
    with pytest.raises(StoreError):
        store.append(JOB, T0 + timedelta(seconds=7), *ev.encode(STORY[6]))
    assert len(store.read(JOB).events) == 7 and store.summary(JOB).seq == 7 and store.read_tail(JOB).after == 4
    sql.run("DROP TRIGGER no_room" if request.node.callspec.params["sql"] == "sqlite"
            else "ALTER TABLE snapshots DROP CONSTRAINT no_room")
    assert store.append(JOB, T0 + timedelta(seconds=7), *ev.encode(STORY[6])) == 8
    assert store.read_tail(JOB).after == 8 and _status(store) == fold(store.read(JOB))


def test_a_store_of_schema_0002_gets_the_snapshots_of_its_long_records_on_open(sql: Sql,
                                                                               request: pytest.FixtureRequest) -> None:
    store = sql.open()
    with store.batch():
        _long(store, [*STORY[:4], *(STORY[4],) * 1030])
    short = JobId("short")
    store.create(short, T0, *ev.encode(ev.JobRecorded.of(JobSpec(short, "local", "local", ("true",)),
                                                         StoreIdentity("sqlite", "x"))))
    assert store.read_tail(JOB).after == 1024
    later = "" if request.node.callspec.params["sql"] == "sqlite" else "ALTER TABLE lock_beats DROP COLUMN next_loop; "
    sweeps = ("DROP INDEX ix_summaries_sweep; ALTER TABLE summaries DROP COLUMN sweep_index; "
              "ALTER TABLE summaries DROP COLUMN sweep; ")  # 0005's
    sql.run(f"DROP TABLE snapshots; {later}{sweeps}UPDATE alembic_version SET version_num = '0002'")  # as 0002 left it
    store = sql.open()
    assert store.read_tail(JOB).after == 1024 and store.read_tail(short).after == 0
    assert _status(store) == fold(store.read(JOB))


# --- an append never folds the whole record while a snapshot serves --------------------------------------

def _summary_is_the_fold(store: JobStore) -> None:
    from dunscaith.domain.model.jobs.summary import summarize

    record = store.read(JOB)
    assert store.summary(JOB) == summarize(fold(record), record.events[-1].seq, JOB)


@pytest.fixture
def no_whole_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any fold of a whole record inside an append fails the test."""
    from dunscaith.adapters.store import summary_rows

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an append folded the whole record")

    monkeypatch.setattr(summary_rows, "carry_of", refused)


def test_each_append_of_a_command_with_no_carry_resumes_from_the_snapshot(sql: Sql, no_whole_fold: None) -> None:
    _built(sql)  # 13 events, a snapshot at 12
    for i in range(6):  # each from a new handle, as each command is; across the snapshot due at 16
        observed = ev.Observed(1, ObjectId("o1"), ("running", "pending")[i % 2], None, None, "")
        command = sql.open(snapshot_every=EVERY)
        assert command.append(JOB, T0 + timedelta(seconds=20 + i), *ev.encode(observed)) == 14 + i
        _summary_is_the_fold(sql.open(snapshot_every=EVERY))
    fresh = sql.open(snapshot_every=EVERY)
    assert fresh.read_tail(JOB).after == 16 and _status(fresh) == fold(fresh.read(JOB))


def test_a_carry_behind_another_writers_appends_folds_only_those(sql: Sql, no_whole_fold: None) -> None:
    supervisor = _built(sql)
    command = sql.open(snapshot_every=EVERY)
    for i in range(5):
        command.append(JOB, T0 + timedelta(seconds=30 + 2 * i), *ev.encode(ev.Requested(f"r{i}", "hold")))
        supervisor.append(JOB, T0 + timedelta(seconds=31 + 2 * i), *ev.encode(ev.Answered(f"r{i}", "refused", "no")))
        _summary_is_the_fold(supervisor)
    assert supervisor.read_tail(JOB).after == 20


def test_another_builds_snapshot_costs_one_whole_fold_and_is_made_anew_for_the_next_append(sql: Sql) -> None:
    from dunscaith.adapters.store import summary_rows

    _built(sql)
    sql.run(f"""UPDATE snapshots SET data = replace(data, '"version":"{VERSION}"', '"version":"0.0.1"')""")
    folds: list[int] = []
    real = summary_rows.carry_of

    def counted(*args: Any, **kwargs: Any) -> Any:
        folds.append(1)
        return real(*args, **kwargs)

    summary_rows.carry_of = counted
    try:
        for i in range(3):
            sql.open(snapshot_every=EVERY).append(JOB, T0 + timedelta(seconds=40 + i), *ev.encode(ev.Absent(1)))
            _summary_is_the_fold(sql.open(snapshot_every=EVERY))
    finally:
        summary_rows.carry_of = real
    assert folds == [1]  # the first append only; it kept this build's snapshot at 12, the third made 16
    fresh = sql.open(snapshot_every=EVERY)
    assert fresh.read_tail(JOB).after == 16 and _status(fresh) == fold(fresh.read(JOB))
