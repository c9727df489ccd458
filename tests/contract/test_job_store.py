"""One contract for every job store: what the supervisor may rely on, whichever store holds the record."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import pytest

from adapters.store.memory import InMemoryStore
from domain.model.jobs.ids import JobId
from ports.job_store import JobExists, JobStore, LockBusy, StoreError, UnknownJob

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
JOB = JobId("analysis-1")


@dataclass
class Backend:
    name: str
    open: Callable[[], JobStore]  # a new handle on the same stored records
    cross_process: bool


def _memory(tmp_path) -> Backend:
    store = InMemoryStore()
    return Backend("memory", lambda: store, cross_process=False)


BACKENDS = {"memory": _memory}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request, tmp_path) -> Iterator[Backend]:
    yield BACKENDS[request.param](tmp_path)


@pytest.fixture
def store(backend) -> JobStore:
    return backend.open()


# --- failure paths first ---------------------------------------------------------------------------


def test_creating_a_job_twice_is_refused_and_the_first_record_stands(store):
    store.create(JOB, T0, "created", {"command": ["true"]})
    with pytest.raises(JobExists):
        store.create(JOB, T0 + timedelta(seconds=1), "created", {"command": ["false"]})
    record = store.read(JOB)
    assert [(e.seq, e.kind, e.data) for e in record.events] == [(1, "created", {"command": ["true"]})]


def test_appending_to_or_reading_an_unknown_job_is_refused(store):
    with pytest.raises(UnknownJob):
        store.append(JobId("nobody"), T0, "note", {})
    with pytest.raises(UnknownJob):
        store.read(JobId("nobody"))
    assert store.jobs() == []


def test_unknown_job_and_job_exists_are_store_errors():
    assert issubclass(UnknownJob, StoreError) and issubclass(JobExists, StoreError)
    assert issubclass(LockBusy, StoreError)


def test_a_time_without_a_zone_or_data_that_is_not_json_is_refused_and_nothing_is_kept(store):
    store.create(JOB, T0, "created", {})
    with pytest.raises(ValueError):
        store.append(JOB, datetime(2026, 1, 1, 12, 0), "note", {})
    with pytest.raises(ValueError):
        store.append(JOB, T0, "note", {"x": object()})
    with pytest.raises(ValueError):
        store.append(JOB, T0, "note", {"x": float("nan")})
    assert [e.seq for e in store.read(JOB).events] == [1]
    assert store.append(JOB, T0, "note", {}) == 2


def test_a_second_actor_cannot_take_a_held_lock_and_can_once_it_is_released(backend):
    first, second = backend.open(), backend.open()
    with first.lock(JOB):
        with pytest.raises(LockBusy), second.lock(JOB):
            pass
        assert second.health(JOB).held
    assert not second.health(JOB).held
    with second.lock(JOB):
        assert first.health(JOB).held


def test_a_released_lock_cannot_beat(store):
    with store.lock(JOB) as held:
        held.release()
        with pytest.raises(StoreError):
            held.beat(T0)
    with store.lock(JOB):
        pass


# --- what a record keeps ---------------------------------------------------------------------------


def test_events_come_back_in_order_with_seq_one_two_three(store):
    store.create(JOB, T0, "created", {"command": ["sh", "-c", "echo hi"], "n": 1})
    assert store.append(JOB, T0 + timedelta(seconds=1), "submitting", {"attempt": 1, "nonce": "ab12"}) == 2
    assert store.append(JOB, T0 + timedelta(seconds=2), "submitted", {"id": "17", "ok": True, "x": None}) == 3
    record = store.read(JOB)
    assert record.job == JOB
    assert not record.truncated_tail
    assert [(e.seq, e.at, e.kind, e.data) for e in record.events] == [
        (1, T0, "created", {"command": ["sh", "-c", "echo hi"], "n": 1}),
        (2, T0 + timedelta(seconds=1), "submitting", {"attempt": 1, "nonce": "ab12"}),
        (3, T0 + timedelta(seconds=2), "submitted", {"id": "17", "ok": True, "x": None}),
    ]


def test_times_come_back_as_the_same_instant_in_utc(store):
    cet = timezone(timedelta(hours=1))
    store.create(JOB, datetime(2026, 1, 1, 13, 0, 0, 123456, tzinfo=cet), "created", {})
    at = store.read(JOB).events[0].at
    assert at == datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert at.utcoffset() == timedelta(0)


def test_unicode_and_nested_fields_round_trip(store):
    data = {"name": "Zürich ✓", "nested": {"list": [1, 2.5, "three"], "empty": {}}}
    store.create(JOB, T0, "created", data)
    assert store.read(JOB).events[0].data == data


def test_jobs_are_kept_apart_and_listed_oldest_first(store):
    for name in ("b-job", "a-job", "c-job"):
        store.create(JobId(name), T0, "created", {"name": name})
    store.append(JobId("a-job"), T0, "note", {})
    assert store.jobs() == ["b-job", "a-job", "c-job"]
    assert [e.seq for e in store.read(JobId("b-job")).events] == [1]
    assert [e.seq for e in store.read(JobId("a-job")).events] == [1, 2]


def test_a_second_handle_reads_what_the_first_appended(backend):
    writer, reader = backend.open(), backend.open()
    writer.create(JOB, T0, "created", {})
    writer.append(JOB, T0, "note", {"i": 1})
    assert [e.seq for e in reader.read(JOB).events] == [1, 2]
    assert reader.append(JOB, T0, "note", {"i": 2}) == 3
    assert [e.data for e in writer.read(JOB).events][1:] == [{"i": 1}, {"i": 2}]


def test_changing_what_was_read_does_not_change_the_record(store):
    store.create(JOB, T0, "created", {"list": [1]})
    store.read(JOB).events[0].data["list"].append(2)
    assert store.read(JOB).events[0].data == {"list": [1]}


# --- the lock and the loop's health ------------------------------------------------------------------


def test_health_of_an_unlocked_job_is_not_held_and_has_no_loop(store):
    health = store.health(JOB)
    assert not health.held and health.last_loop is None


def test_beat_is_seen_by_health_and_outlives_the_lock(backend):
    holder, watcher = backend.open(), backend.open()
    with holder.lock(JOB) as held:
        assert watcher.health(JOB).held and watcher.health(JOB).last_loop is None
        held.beat(T0)
        held.beat(T0 + timedelta(seconds=30))
        health = watcher.health(JOB)
        assert health.held and health.last_loop == T0 + timedelta(seconds=30)
    health = watcher.health(JOB)
    assert not health.held and health.last_loop == T0 + timedelta(seconds=30)


def test_the_lock_is_released_when_the_block_raises(store):
    with pytest.raises(RuntimeError), store.lock(JOB):
        raise RuntimeError("boom")
    assert not store.health(JOB).held


def test_locks_of_different_jobs_are_independent(store):
    with store.lock(JobId("one")), store.lock(JobId("two")):
        assert store.health(JobId("one")).held and store.health(JobId("two")).held


def test_the_store_names_itself(store):
    identity = store.identity()
    assert identity.backend and identity.location
