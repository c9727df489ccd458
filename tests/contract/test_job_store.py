"""One contract for every job store: what the supervisor may rely on, whichever store holds the record."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Protocol

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import JobRecord, LoopHealth
from dunscaith.ports.job_store import Append, JobExists, JobStore, LockBusy, LockLost, StoreError, UnknownJob
from tests.expect import present

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
JOB = JobId("analysis-1")


class ClosableStore(JobStore, Protocol):
    """A store the test opened and closes (closing is the composition root's, not the use cases' port)."""

    def close(self) -> None: ...


@dataclass
class Backend:
    name: str
    open: Callable[[], JobStore]  # a new handle on the same stored records
    child_opens: str | None = None  # Python that opens the same store as `store` in another process
    opened: list[ClosableStore] = field(default_factory=list)


def _memory(tmp_path: Path) -> Backend:
    store = InMemoryStore()
    return Backend("memory", lambda: store)


def _memory_watched(tmp_path: Path) -> Backend:
    store = InMemoryStore(watchable=True)
    return Backend("memory-watched", lambda: store)


def _sqlite(tmp_path: Path) -> Backend:
    root = tmp_path / "records"
    made = Backend(
        "sqlite",
        lambda: _keep(made, SqliteStore.open(root, SystemHost())),
        child_opens=(
            "import pathlib; from dunscaith.adapters.host.system import SystemHost;"
            "from dunscaith.adapters.store.sqlite.store import SqliteStore;"
            f"store = SqliteStore.open(pathlib.Path({str(root)!r}), SystemHost())"
        ),
    )
    return made


def _keep(backend: Backend, store: ClosableStore) -> ClosableStore:
    backend.opened.append(store)
    return store


def _postgresql(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    server = request.getfixturevalue("postgres_server")
    url = server.url(server.new_database())
    made = Backend(
        "postgresql",
        lambda: _keep(made, PostgresStore.open(PostgresTarget.from_settings(url))),
        child_opens=(
            "from dunscaith.adapters.store.postgres.store import PostgresStore;"
            "from dunscaith.adapters.store.postgres.target import PostgresTarget;"
            f"store = PostgresStore.open(PostgresTarget.from_settings({url!r}))"
        ),
    )
    return made


# Each makes a Backend from tmp_path (and, for the server, the test's request).
BACKENDS: dict[str, Callable[..., Backend]] = {"memory": _memory, "memory-watched": _memory_watched, "sqlite": _sqlite,
                                               "postgresql": _postgresql}
_REAL_SERVER = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture(params=[pytest.param(name, marks=_REAL_SERVER if name == "postgresql" else [])
                        for name in sorted(BACKENDS)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    make = BACKENDS[request.param]
    made = make(tmp_path, request) if request.param == "postgresql" else make(tmp_path)
    yield made
    for store in made.opened:
        store.close()


def _child(backend: Backend, body: str) -> subprocess.Popen[str]:
    """Another process on the same store, running ``body`` (``store`` is open); talks over pipes."""
    if backend.child_opens is None:
        pytest.skip(f"the {backend.name} store lives in one process: no other process can reach it")
    return subprocess.Popen(
        [sys.executable, "-c", f"{backend.child_opens}\n{body}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def store(backend: Backend) -> JobStore:
    return backend.open()


# --- failure paths first ---------------------------------------------------------------------------


def test_creating_a_job_twice_is_refused_and_the_first_record_stands(store: JobStore) -> None:
    store.create(JOB, T0, "created", {"command": ["true"]})
    with pytest.raises(JobExists):
        store.create(JOB, T0 + timedelta(seconds=1), "created", {"command": ["false"]})
    record = store.read(JOB)
    assert [(e.seq, e.kind, e.data) for e in record.events] == [(1, "created", {"command": ["true"]})]


def test_appending_to_or_reading_an_unknown_job_is_refused(store: JobStore) -> None:
    with pytest.raises(UnknownJob):
        store.append(JobId("nobody"), T0, "note", {})
    with pytest.raises(UnknownJob):
        store.read(JobId("nobody"))
    assert store.jobs() == []


def test_unknown_job_and_job_exists_are_store_errors() -> None:
    assert issubclass(UnknownJob, StoreError) and issubclass(JobExists, StoreError)
    assert issubclass(LockBusy, StoreError) and issubclass(LockLost, StoreError)


def test_a_time_without_a_zone_or_data_that_is_not_json_is_refused_and_nothing_is_kept(store: JobStore) -> None:
    store.create(JOB, T0, "created", {})
    with pytest.raises(ValueError):
        store.append(JOB, datetime(2026, 1, 1, 12, 0), "note", {})
    with pytest.raises(ValueError):
        store.append(JOB, T0, "note", {"x": object()})
    with pytest.raises(ValueError):
        store.append(JOB, T0, "note", {"x": float("nan")})
    assert [e.seq for e in store.read(JOB).events] == [1]
    assert store.append(JOB, T0, "note", {}) == 2


def test_a_second_actor_cannot_take_a_held_lock_and_can_once_it_is_released(backend: Backend) -> None:
    first, second = backend.open(), backend.open()
    with first.lock(JOB):
        with pytest.raises(LockBusy), second.lock(JOB):
            pass
        assert second.health(JOB).held
    assert not second.health(JOB).held
    with second.lock(JOB):
        assert first.health(JOB).held


def test_lock_many_takes_each_free_lock_together_and_each_is_given_back_as_its_own_is_left(backend: Backend) -> None:
    first, second = backend.open(), backend.open()
    jobs = [JobId(f"el-{i}") for i in range(1, 6)]
    for job in jobs:
        first.create(job, T0, "created", {})
    with second.lock(jobs[1]), first.lock(jobs[3]):  # another actor's, and this handle's own under lock
        taken = first.lock_many([*jobs, jobs[0]])  # each once
        assert set(taken) == {jobs[0], jobs[2], jobs[4]}  # the two held ones left out
    assert first.lock_many([]) == {}
    held = {job: lock.__enter__() for job, lock in taken.items()}
    try:
        for job, lock in held.items():
            lock.check()
            lock.beat(T0)
            assert second.health(job).held
            with pytest.raises(LockBusy), second.lock(job):
                pass
        first.append_many([Append(job, T0, "note", {}) for job in held])  # the holder of every one of them
        taken[jobs[0]].__exit__(None, None, None)  # el-1's alone given back
        assert not second.health(jobs[0]).held and second.health(jobs[2]).held
        with second.lock(jobs[0]):
            pass
        held[jobs[2]].check()
    finally:
        for job in (jobs[2], jobs[4]):
            taken[job].__exit__(None, None, None)
    assert not any(second.health(job).held for job in jobs)
    with pytest.raises(LockLost):  # given back for good
        held[jobs[2]].check()
    again = second.lock_many(jobs)
    assert set(again) == set(jobs)  # every one free again
    for giving_back in again.values():
        giving_back.__exit__(None, None, None)


def test_a_held_lock_checks_and_a_released_one_is_lost_for_good(store: JobStore) -> None:
    with store.lock(JOB) as held:
        held.check()
        held.check()
    with pytest.raises(LockLost):  # released by leaving its block
        held.check()
    with store.lock(JOB) as again:
        again.check()
        with pytest.raises(LockLost):  # the job's lock is held again, by another: the first stays lost
            held.check()


def test_a_released_lock_cannot_beat(store: JobStore) -> None:
    with store.lock(JOB) as held:
        pass
    with pytest.raises(StoreError):
        held.beat(T0)
    with store.lock(JOB):
        pass


# --- what a record keeps ---------------------------------------------------------------------------


def test_events_come_back_in_order_with_seq_one_two_three(store: JobStore) -> None:
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


def test_times_come_back_as_the_same_instant_in_utc(store: JobStore) -> None:
    cet = timezone(timedelta(hours=1))
    store.create(JOB, datetime(2026, 1, 1, 13, 0, 0, 123456, tzinfo=cet), "created", {})
    at = store.read(JOB).events[0].at
    assert at == datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert at.utcoffset() == timedelta(0)


def test_unicode_and_nested_fields_round_trip(store: JobStore) -> None:
    data = {"name": "Zürich ✓", "nested": {"list": [1, 2.5, "three"], "empty": {}}}
    store.create(JOB, T0, "created", data)
    assert store.read(JOB).events[0].data == data


def test_jobs_are_kept_apart_and_listed_oldest_first(store: JobStore) -> None:
    for name in ("b-job", "a-job", "c-job"):
        store.create(JobId(name), T0, "created", {"name": name})
    store.append(JobId("a-job"), T0, "note", {})
    assert store.jobs() == ["b-job", "a-job", "c-job"]
    assert [e.seq for e in store.read(JobId("b-job")).events] == [1]
    assert [e.seq for e in store.read(JobId("a-job")).events] == [1, 2]


def test_last_seqs_say_how_far_each_record_goes_in_one_question(backend: Backend) -> None:
    writer, reader = backend.open(), backend.open()
    quoted, other = JobId("it's odd ünïcode 名前"), JobId("other")
    for job in (JOB, quoted, other):
        writer.create(job, T0, "created", {})
    writer.append(JOB, T0, "note", {})
    for _ in range(3):
        writer.append(quoted, T0, "note", {})
    assert reader.last_seqs([JOB, quoted, JobId("not-recorded"), JOB]) == {JOB: 2, quoted: 4}
    writer.append(JOB, T0, "note", {})  # another handle's append, seen at once
    assert reader.last_seqs([JOB]) == {JOB: len(reader.read(JOB).events)} == {JOB: 3}
    assert reader.last_seqs([]) == {}
    many = [JobId(f"many-{i}") for i in range(1200)]  # more names than one statement's parameters may be
    with writer.batch():
        for job in many:
            writer.create(job, T0, "created", {})
    assert reader.last_seqs([*many, JOB]) == {**dict.fromkeys(many, 1), JOB: 3}


def test_read_many_reads_each_record_as_read_does_in_one_question(backend: Backend) -> None:
    writer, reader = backend.open(), backend.open()
    quoted = JobId("it's odd ünïcode 名前")
    for job in (JOB, quoted):
        writer.create(job, T0, "created", {"name": job})
    writer.append(JOB, T0, "note", {"nested": {"list": [1, 2.5]}})

    def lines(record: JobRecord) -> list[tuple[int, str, dict[str, object]]]:
        return [(e.seq, e.kind, dict(e.data)) for e in record.events]
    found = reader.read_many([JOB, quoted, JobId("not-recorded"), JOB])  # one not recorded: left out
    assert set(found) == {JOB, quoted}
    assert {job: lines(r) for job, r in found.items()} == {job: lines(reader.read(job)) for job in (JOB, quoted)}
    assert found[JOB].job == JOB and found[quoted].job == quoted
    writer.append(quoted, T0, "note", {})  # another handle's append, seen at once
    assert [e.seq for e in reader.read_many([quoted])[quoted].events] == [1, 2]
    assert reader.read_many([]) == {}
    many = [JobId(f"many-{i}") for i in range(1200)]  # more names than one statement's parameters may be
    with writer.batch():
        for job in many:
            writer.create(job, T0, "created", {"i": job})
    read = reader.read_many([*many, JOB])
    assert list(read) == [*many, JOB]  # in the order asked
    assert all([(e.seq, dict(e.data)) for e in read[job].events] == [(1, {"i": job})] for job in many)


# --- many jobs' events in one transaction (a sweep's phase) ------------------------------------------

A, B, C = JobId("sweep-1"), JobId("sweep-2"), JobId("sweep-3")


def _three(store: JobStore) -> None:
    for job in (A, B, C):
        store.create(job, T0, "created", {})
    store.append(A, T0, "note", {"before": True})


def test_append_many_with_a_job_not_recorded_keeps_none_of_them(store: JobStore) -> None:
    _three(store)
    before = store.summary(A)
    with pytest.raises(UnknownJob):
        store.append_many([Append(A, T0, "submitting", {}), Append(JobId("nobody"), T0, "submitting", {}),
                           Append(B, T0, "submitting", {})])
    assert store.last_seqs([A, B, C]) == {A: 2, B: 1, C: 1}
    assert [e.kind for e in store.read(A).events] == ["created", "note"]
    assert store.summary(A) == before
    assert store.append(A, T0, "note", {}) == 3  # what was rolled back is not counted in its next seq


def test_append_many_with_one_event_that_does_not_encode_keeps_none_of_them(store: JobStore) -> None:
    _three(store)
    with pytest.raises(ValueError):
        store.append_many([Append(A, T0, "submitting", {}), Append(B, T0, "submitting", {"x": float("nan")})])
    with pytest.raises(ValueError):
        store.append_many([Append(A, T0, "submitting", {}), Append(B, datetime(2026, 1, 1, 12, 0), "submitting", {})])
    assert store.last_seqs([A, B, C]) == {A: 2, B: 1, C: 1}


def test_append_many_appends_each_event_in_order_with_its_seq(store: JobStore) -> None:
    _three(store)
    seqs = store.append_many([Append(A, T0, "submitting", {"nonce": "n"}), Append(B, T0, "submitting", {"i": 2}),
                              Append(A, T0 + timedelta(seconds=1), "created", {"object_id": "7_1"}),
                              Append(C, T0, "submitting", {"i": 3})])
    assert seqs == [3, 2, 4, 2]
    assert [(e.seq, e.kind, e.data) for e in store.read(A).events][2:] == [
        (3, "submitting", {"nonce": "n"}), (4, "created", {"object_id": "7_1"})]
    assert store.read(A).events[3].at == T0 + timedelta(seconds=1)
    assert store.append_many([]) == []
    assert store.append(B, T0, "note", {}) == 3
    assert store.last_seqs([A, B, C]) == {A: 4, B: 3, C: 2}


def test_append_many_by_the_holder_of_every_jobs_lock_is_seen_by_another_handle(backend: Backend) -> None:
    holder, reader = backend.open(), backend.open()
    _three(holder)
    with holder.lock(A) as a, holder.lock(B), holder.lock(C):
        assert holder.append_many([Append(job, T0, "released", {"attempt": 1}) for job in (A, B, C)]) == [3, 2, 2]
        a.check()  # still held
        assert reader.last_seqs([A, B, C]) == {A: 3, B: 2, C: 2}
    assert [e.kind for e in reader.read(C).events] == ["created", "released"]
    assert reader.summary(C) == holder.summary(C)


def test_append_many_is_all_or_nothing_even_if_the_process_is_killed_at_once(backend: Backend) -> None:
    _three(backend.open())
    child = _child(
        backend,
        "from datetime import datetime, UTC\n"
        "from dunscaith.ports.job_store import Append\n"
        "for i in range(10_000):\n"
        "    store.append_many([Append(j, datetime.now(UTC), 'note', {'i': i}) for j in ('sweep-1', 'sweep-2', "
        "'sweep-3')])\n"
        "    print(i, flush=True)\n",
    )
    acknowledged: list[int] = []
    try:
        while len(acknowledged) < 20:
            acknowledged.append(int(present(child.stdout).readline()))
    finally:
        child.send_signal(signal.SIGKILL)  # right after a batch returned, maybe during the next one
        child.wait()
    reader = backend.open()
    notes = {job: [e.data["i"] for e in reader.read(job).events if e.kind == "note" and "i" in e.data]
             for job in (A, B, C)}
    assert notes[A] == notes[B] == notes[C] == list(range(len(notes[A])))  # each batch whole, or not at all
    assert len(notes[A]) >= len(acknowledged)


def test_a_second_handle_reads_what_the_first_appended(backend: Backend) -> None:
    writer, reader = backend.open(), backend.open()
    writer.create(JOB, T0, "created", {})
    writer.append(JOB, T0, "note", {"i": 1})
    assert [e.seq for e in reader.read(JOB).events] == [1, 2]
    assert reader.append(JOB, T0, "note", {"i": 2}) == 3
    assert [e.data for e in writer.read(JOB).events][1:] == [{"i": 1}, {"i": 2}]


def test_changing_what_was_read_does_not_change_the_record(store: JobStore) -> None:
    store.create(JOB, T0, "created", {"list": [1]})
    store.read(JOB).events[0].data["list"].append(2)
    assert store.read(JOB).events[0].data == {"list": [1]}


def test_lines_of_one_text_read_equal_and_none_can_be_changed(store: JobStore) -> None:
    store.create(JOB, T0, "created", {"list": [1]})
    for _ in range(3):
        store.append(JOB, T0, "note", {"list": [1]})
        store.append(JOB, T0, "seen", {"state": "running", "code": None})
    lines = store.read(JOB).events
    assert [line.data for line in lines[1::2]] == [{"list": [1]}] * 3
    assert [line.data for line in lines[2::2]] == [{"state": "running", "code": None}] * 3
    with pytest.raises(TypeError):
        lines[2].data["state"] = "ended"  # type: ignore[index]
    lines[1].data["list"].append(2)  # a list inside a line is that line's own
    assert lines[3].data == {"list": [1]}
    assert [line.data for line in store.read(JOB).events[1::2]] == [{"list": [1]}] * 3


# --- the lock and the loop's health ------------------------------------------------------------------


def test_health_of_an_unlocked_job_is_not_held_and_has_no_loop(store: JobStore) -> None:
    health = store.health(JOB)
    assert not health.held and health.last_loop is None


def test_beat_is_seen_by_health_and_outlives_the_lock(backend: Backend) -> None:
    holder, watcher = backend.open(), backend.open()
    with holder.lock(JOB) as held:
        assert watcher.health(JOB).held and watcher.health(JOB).last_loop is None
        held.beat(T0)
        held.beat(T0 + timedelta(seconds=30))
        health = watcher.health(JOB)
        assert health.held and health.last_loop == T0 + timedelta(seconds=30)
    health = watcher.health(JOB)
    assert not health.held and health.last_loop == T0 + timedelta(seconds=30)


def test_healths_answers_for_every_job_asked_at_once(backend: Backend) -> None:
    holder, watcher = backend.open(), backend.open()
    one, two = JobId("one"), JobId("two")
    with holder.lock(one) as held:
        held.beat(T0)
        assert watcher.healths([one, two, one]) == {one: LoopHealth(held=True, last_loop=T0),
                                                    two: LoopHealth(held=False, last_loop=None)}
    assert watcher.healths([one]) == {one: LoopHealth(held=False, last_loop=T0)}
    assert watcher.healths([]) == {}


def test_unattended_is_every_unsettled_job_whose_lock_no_one_holds(backend: Backend) -> None:
    from dunscaith.domain.model.jobs import events as ev
    from dunscaith.domain.model.jobs.spec import JobSpec

    holder, watcher = backend.open(), backend.open()
    # names whose keys the server computes too (PostgreSQL): ASCII, a quote and a space, UTF-8
    names = [JobId(n) for n in ("plain-1", "it's odd 2", "ünïcode-名前-3", "plain-4", "done-5")]
    for n, job in enumerate(names):
        holder.create(job, T0, *ev.encode(ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)),
                                                            holder.identity())))
        if n == 4:
            holder.append(job, T0, *ev.encode(ev.OutcomeReached("succeeded", "")))
            holder.append(job, T0, *ev.encode(ev.Settled()))
    assert [s.job for s in watcher.unattended()] == names[:4]
    with holder.lock(names[1]), holder.lock(names[2]):
        assert [s.job for s in watcher.unattended()] == [names[0], names[3]]
        assert watcher.unattended() == [s for s in watcher.unsettled() if not watcher.healths([s.job])[s.job].held]
        assert watcher.unattended_names() == [(s.job, s.state, s.sweep) for s in watcher.unattended()]
    assert [s.job for s in watcher.unattended()] == names[:4]


def test_unattended_names_are_unattended_by_name_state_and_sweep_in_the_same_order(backend: Backend) -> None:
    from dunscaith.domain.model.jobs import events as ev
    from dunscaith.domain.model.jobs.ids import Nonce
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.model.jobs.sweeps import SweepMember

    holder, watcher = backend.open(), backend.open()
    sweep = JobId("scan")
    elements = [JobId(f"scan-{i}") for i in range(3)]
    for i, job in enumerate(elements):
        spec = JobSpec(job, "local", "local", ("echo", str(i)), member=SweepMember(sweep, i))
        holder.create(job, T0, *ev.encode(ev.JobRecorded.of(spec, holder.identity())))
    alone = JobId("alone")
    holder.create(alone, T0, *ev.encode(ev.JobRecorded.of(JobSpec(alone, "local", "local", ("true",)),
                                                          holder.identity())))
    holder.append(alone, T0, *ev.encode(ev.Submitting(1, Nonce("n1"))))
    with holder.lock(elements[1]):
        named = watcher.unattended_names()
        assert named == [(s.job, s.state, s.sweep) for s in watcher.unattended()]
    assert [(n.job, n.sweep) for n in named] == [(elements[0], sweep), (elements[2], sweep), (alone, None)]
    assert named[-1].state == watcher.summary(alone).state
    assert watcher.unattended_names() == [(s.job, s.state, s.sweep) for s in watcher.unattended()]


def test_the_elements_of_a_sweep_whose_lock_is_held_are_not_unattended(backend: Backend) -> None:
    # A sweep's supervisor holds its sweep's lock (sweep_lock.py): the elements it has not started yet,
    # their own locks free, are its own, not Unattended (issue 38); a job of its own is as ever.
    from dunscaith.domain.model.jobs import events as ev
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.model.jobs.sweeps import SweepMember

    holder, watcher = backend.open(), backend.open()
    for sweep in (JobId("scän 1"), JobId("other")):  # a name whose key the server computes too
        for i in range(2):
            job = JobId(f"{sweep}-{i}")
            spec = JobSpec(job, "local", "local", ("echo", str(i)), member=SweepMember(sweep, i, 1))
            holder.create(job, T0, *ev.encode(ev.JobRecorded.of(spec, holder.identity())))
    alone = JobId("alone")
    holder.create(alone, T0, *ev.encode(ev.JobRecorded.of(JobSpec(alone, "local", "local", ("true",)),
                                                          holder.identity())))
    every = [JobId("scän 1-0"), JobId("scän 1-1"), JobId("other-0"), JobId("other-1"), alone]
    assert sorted(s.job for s in watcher.unattended()) == sorted(every)
    with holder.lock(JobId("scän 1")), holder.lock(JobId("other-0")):
        assert sorted(s.job for s in watcher.unattended()) == sorted([JobId("other-1"), alone])
        assert sorted(n.job for n in watcher.unattended_names()) == sorted([JobId("other-1"), alone])
        assert watcher.health(JobId("scän 1")).held
    assert sorted(n.job for n in watcher.unattended_names()) == sorted(every)



def test_many_jobs_asked_at_once_read_as_each_asked_alone(backend: Backend) -> None:
    # A store may answer many jobs at once otherwise than one at a time (SQLite lists its locks folder
    # once, from a few dozen, and probes only the lock files in it): the answers are the same. Jobs never
    # locked, one held now, one locked before with a beat left, a sweep's elements under its held lock.
    from dunscaith.domain.model.jobs import events as ev
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.model.jobs.sweeps import SweepMember

    holder, watcher = backend.open(), backend.open()
    alone = [JobId(f"many-{i}") for i in range(40)]
    for job in alone:
        holder.create(job, T0, *ev.encode(ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)),
                                                            holder.identity())))
    sweep = JobId("many-sweep")
    elements = [JobId(f"many-sweep-{i}") for i in range(40)]
    for i, job in enumerate(elements):
        spec = JobSpec(job, "local", "local", ("true",), member=SweepMember(sweep, i))
        holder.create(job, T0, *ev.encode(ev.JobRecorded.of(spec, holder.identity())))
    with holder.lock(alone[3]) as beaten:
        beaten.beat(T0)
    every = [*alone, *elements]
    with holder.lock(alone[7]), holder.lock(sweep):
        healths = watcher.healths(every)
        assert healths == {job: watcher.health(job) for job in every}
        assert healths[alone[7]].held and not healths[alone[3]].held and healths[alone[3]].last_loop == T0
        named = watcher.unattended_names()
        assert [n.job for n in named] == [job for job in alone if job != alone[7]]
        assert named == [(s.job, s.state, s.sweep) for s in watcher.unattended()]
    assert [n.job for n in watcher.unattended_names()] == every

def test_the_lock_is_released_when_the_block_raises(store: JobStore) -> None:
    with pytest.raises(RuntimeError), store.lock(JOB):
        raise RuntimeError("boom")
    assert not store.health(JOB).held


def test_locks_of_different_jobs_are_independent(store: JobStore) -> None:
    with store.lock(JobId("one")), store.lock(JobId("two")):
        assert store.health(JobId("one")).held and store.health(JobId("two")).held


def test_the_store_names_itself(store: JobStore) -> None:
    identity = store.identity()
    assert identity.backend and identity.location


def test_the_store_says_where_its_records_are_the_same_from_every_handle(backend: Backend) -> None:
    first, second = backend.open(), backend.open()
    assert first.location() and first.location() == second.location()


# --- across processes: what only a store on disk can promise ---------------------------------------

def _await_free(store: JobStore, job: JobId, deadline: float = 10.0) -> None:
    """A kernel lock is free once its holder is dead; a server's once the server has seen the session
    end, which it learns from the closed socket an instant later (no timeout is involved)."""
    end = time.monotonic() + deadline
    while store.health(job).held and time.monotonic() < end:
        time.sleep(0.005)


CHILD_HOLDS_LOCK = """
import sys
from datetime import datetime, UTC
with store.lock("analysis-1") as held:
    held.beat(datetime(2026, 1, 1, 12, 0, tzinfo=UTC))
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_lock_held_by_another_process_is_refused_until_it_lets_go(backend: Backend) -> None:
    child = _child(backend, CHILD_HOLDS_LOCK)
    try:
        assert present(child.stdout).readline() == "held\n"
        store = backend.open()
        with pytest.raises(LockBusy), store.lock(JOB):
            pass
        assert store.health(JOB) == LoopHealth(held=True, last_loop=T0)
        present(child.stdin).close()
        assert child.wait(timeout=30) == 0
        with store.lock(JOB):
            pass
    finally:
        child.kill()
        child.wait()


def test_the_lock_of_a_holder_killed_with_sigkill_is_free_and_its_last_beat_still_shows(backend: Backend) -> None:
    child = _child(backend, CHILD_HOLDS_LOCK)
    try:
        assert present(child.stdout).readline() == "held\n"
        store = backend.open()
        assert store.health(JOB).held
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    _await_free(store, JOB)
    assert store.health(JOB) == LoopHealth(held=False, last_loop=T0)
    with store.lock(JOB) as held:
        held.beat(T0 + timedelta(minutes=1))
    assert store.health(JOB).last_loop == T0 + timedelta(minutes=1)


def test_an_event_is_kept_once_append_returned_even_if_the_process_is_killed_at_once(backend: Backend) -> None:
    backend.open().create(JOB, T0, "created", {})
    child = _child(
        backend,
        "from datetime import datetime, UTC\n"
        "for i in range(10_000):\n"
        "    seq = store.append('analysis-1', datetime.now(UTC), 'note', {'i': i})\n"
        "    print(seq, flush=True)\n",
    )
    acknowledged: list[int] = []
    try:
        while len(acknowledged) < 20:
            acknowledged.append(int(present(child.stdout).readline()))
    finally:
        child.send_signal(signal.SIGKILL)  # right after an append returned, maybe during the next one
        child.wait()
    record = backend.open().read(JOB)
    seqs = [e.seq for e in record.events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert set(acknowledged) <= set(seqs)
    assert [e.data["i"] for e in record.events[1:]] == list(range(len(seqs) - 1))


@pytest.mark.slow
def test_another_process_watching_health_never_makes_taking_a_free_lock_fail(backend: Backend) -> None:
    child = _child(
        backend,
        "import sys\n"
        "print('watching', flush=True)\n"
        "while True:\n"
        "    store.health('analysis-1')\n",
    )
    try:
        assert present(child.stdout).readline() == "watching\n"
        store = backend.open()
        for _ in range(3000):  # each probe holds a shared lock for an instant; a taker must not mistake it
            with store.lock(JOB):
                pass
    finally:
        child.kill()
        child.wait()


# --- the watch of appends ------------------------------------------------------------------------------

WATCHED = {"memory": False, "memory-watched": True, "sqlite": True, "postgresql": True}


def test_a_store_that_tells_of_appends_wakes_its_watcher_after_another_writer_appends(backend: Backend) -> None:
    import threading

    store = backend.open()
    store.create(JOB, T0, "created", {})
    woke = threading.Event()
    watch = store.watch_appends(JOB, woke.set)
    if not WATCHED[backend.name]:
        assert watch is None  # its holder reads the record every poll interval instead
        return
    assert watch is not None
    try:
        if backend.child_opens is None:
            backend.open().append(JOB, T0 + timedelta(seconds=1), "request", {"request": "r-1"})
        else:  # a writer in another process, as a job command is
            child = _child(backend, f"store.append({JOB!r}, __import__('datetime').datetime.now("
                                    "__import__('datetime').UTC), 'request', {'request': 'r-1'}); print('appended')")
            assert present(child.stdout).readline() == "appended\n" and child.wait(timeout=30) == 0
        assert woke.wait(timeout=30), "the append did not wake the watcher"
        assert [line.kind for line in store.read(JOB).events] == ["created", "request"]
    finally:
        watch.close()
    watch.close()  # closing twice is harmless


def test_a_follower_is_woken_by_the_lock_holders_own_appends_and_takes_no_lock(backend: Backend) -> None:
    """``watch``: the record followed as it grows, the supervisor's own appends included, by a reader
    that holds nothing (the holder's lock is taken while the follower follows)."""
    import threading

    store = backend.open()
    store.create(JOB, T0, "created", {})
    woke = threading.Event()
    follower = store.follow_appends(JOB, woke.set)
    if not WATCHED[backend.name]:
        assert follower is None  # the follower reads the record every interval instead
        return
    assert follower is not None
    try:
        holder = backend.open()
        with holder.lock(JOB):  # free: the follower took no lock
            holder.append(JOB, T0 + timedelta(seconds=1), "observed", {"attempt": 1})
            assert woke.wait(timeout=30), "the holder's append did not wake the follower"
        assert [line.kind for line in store.read(JOB).events] == ["created", "observed"]
    finally:
        follower.close()
