"""Prune on fakes: settled jobs only, under the job's lock, the residual entry before the event, and
pruning again finishes what a crash left."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.prune import BadDuration, parse_duration
from dunscaith.domain.model.jobs.record import HostIdentity, StoreIdentity
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReason
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import RecordInconsistent, fold_events
from dunscaith.domain.services.jobs.prune import Prune, Pruning
from tests.expect import present
from tests.unit.jobs.helpers import NoCrash, Rig, StopAfter, rig


class Crash(Exception):
    pass


class CrashAt(NoCrash):
    def __init__(self, point: str) -> None:
        super().__init__()
        self.point = point

    def reached(self, point: str) -> None:
        super().reached(point)
        if point == self.point:
            self.point = ""  # once
            raise Crash(point)


def _pointer(job: JobId, host: str = "") -> Pointer:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return Pointer(job, host or "here", "/var/tmp/r", HostIdentity(host or "m", host or "here"), "/bin/dunscaith",
                   "local", "local", "succeeded", at, None)


def _prune(r: Rig, pointers: InMemoryPointers | None = None, crash: NoCrash | None = None) -> Prune:
    return Prune(r.store, r.residual, pointers or InMemoryPointers(), r.clock, crash or NoCrash())


def _settled(r: Rig, name: str = "j1") -> JobId:
    job = r.record(name)
    end = r.run(job)
    assert present(end.state).settled
    return job


def _pruned_entries(r: Rig) -> list:  # type: ignore[type-arg]
    return [x.entry for x in r.residual.entries() if x.entry and x.entry.reason is ResidualReason.PRUNED]


def test_a_job_that_is_not_settled_is_refused_and_nothing_is_written() -> None:
    r = rig(exit_code=None)
    job = r.record()
    r.run(job, StopAfter(r.clock, waits=2))
    assert present(r.state(job).current).object_state is ObjectState.PENDING
    before = r.kinds(job)
    result = _prune(r).one(job)
    assert result.result is Pruning.REFUSED and "not settled" in result.detail
    assert r.kinds(job) == before and r.residual.entries() == []


def test_a_job_whose_lock_is_held_is_refused() -> None:
    r = rig()
    job = _settled(r)
    with r.store.lock(job):  # a supervisor (reconcile) or another command acts on it now
        result = _prune(r).one(job)
    assert result.result is Pruning.REFUSED and "live supervisor" in result.detail
    assert "pruned" not in r.kinds(job) and r.residual.entries() == []


def test_a_settled_job_is_listed_first_then_recorded_pruned_and_its_pointer_removed() -> None:
    r = rig()
    job = _settled(r)
    pointers = InMemoryPointers()
    pointers.write(_pointer(job))
    crash = NoCrash()
    result = _prune(r, pointers, crash).one(job)
    assert result.result is Pruning.PRUNED and result.problem == ""
    assert r.kinds(job)[-1] == "pruned" and r.state(job).pruned_at == r.clock.now()
    (entry,) = _pruned_entries(r)
    assert (entry.job, entry.nonce, entry.attempt) == (job, None, None)
    assert crash.points == ["prune-residual-added", "pruned-committed"]
    assert pointers.all() == []


def test_a_second_prune_changes_nothing() -> None:
    r = rig()
    job = _settled(r)
    first = _prune(r).one(job)
    r.clock.advance(hours=1)
    second = _prune(r).one(job)
    assert second.result is Pruning.ALREADY and second.pruned_at == first.pruned_at
    assert r.kinds(job).count("pruned") == 1 and len(_pruned_entries(r)) == 1


def test_a_crash_after_the_residual_entry_is_finished_by_the_next_prune() -> None:
    r = rig()
    job = _settled(r)
    pointers = InMemoryPointers()
    pointers.write(_pointer(job))
    with pytest.raises(Crash):
        _prune(r, pointers, CrashAt("prune-residual-added")).one(job)
    (listed,) = _pruned_entries(r)
    assert "pruned" not in r.kinds(job) and pointers.all() != []  # the entry is there, nothing else
    r.clock.advance(minutes=5)
    again = _prune(r, pointers).one(job)
    assert again.result is Pruning.PRUNED
    assert _pruned_entries(r) == [listed]  # the first entry stands
    assert r.kinds(job).count("pruned") == 1 and pointers.all() == []


def test_a_crash_after_the_event_leaves_a_pointer_the_next_prune_removes() -> None:
    r = rig()
    job = _settled(r)
    pointers = InMemoryPointers()
    pointers.write(_pointer(job))
    with pytest.raises(Crash):
        _prune(r, pointers, CrashAt("pruned-committed")).one(job)
    assert pointers.all() != []
    assert _prune(r, pointers).older_than(timedelta(days=30)) == ([], [])  # finished quietly
    assert pointers.all() == [] and r.kinds(job).count("pruned") == 1


def test_older_than_measures_from_the_last_event() -> None:
    r = rig()
    old = _settled(r, "old")
    r.clock.advance(days=20)
    young = _settled(r, "young")
    r.clock.advance(days=11)  # old: 31 days since its last event; young: 11
    done, problems = _prune(r).older_than(timedelta(days=30))
    assert problems == [] and [(d.job, d.result) for d in done] == [(old, Pruning.PRUNED)]
    assert "pruned" not in r.kinds(young)
    done, _ = _prune(r).older_than(timedelta(days=10))
    assert [d.job for d in done] == [young]  # old is pruned already: not again


def test_older_than_leaves_a_job_at_work_and_one_a_supervisor_holds() -> None:
    r = rig()
    busy = r.record("busy")  # recorded, not yet supervised: not settled
    held = _settled(r, "held")
    r.clock.advance(days=60)
    with r.store.lock(held):
        done, problems = _prune(r).older_than(timedelta(days=30))
    assert (done, problems) == ([], [])
    assert "pruned" not in r.kinds(busy) and "pruned" not in r.kinds(held)


def test_another_hosts_pointer_of_the_same_name_is_left_alone() -> None:
    class HereStore(InMemoryStore):
        """A store bound to this host, as a record root is."""

        def identity(self) -> StoreIdentity:
            return StoreIdentity("memory", "m", host=HostIdentity("m", "here"))

    r = rig(store=HereStore())
    job = _settled(r)
    pointers = InMemoryPointers()
    pointers.write(_pointer(job, host="login2"))
    assert _prune(r, pointers).one(job).result is Pruning.PRUNED
    assert [p.pointer.host for p in pointers.all() if p.pointer] == ["login2"]


@pytest.mark.parametrize(("text", "seconds"), [("30d", 30 * 86400), ("12h", 43200), ("90m", 5400), ("45s", 45),
                                               ("2w", 14 * 86400), ("0s", 0)])
def test_durations_read(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "30", "d", "3x", "1.5h", "-1d", "1d2h", "10 days", "1e3s"])
def test_bad_durations_say_what_one_looks_like(text: str) -> None:
    with pytest.raises(BadDuration, match="30d, 12h, 90m"):
        parse_duration(text)


def test_a_pruned_event_before_the_record_settled_does_not_read() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    spec = JobSpec(JobId("j"), "local", "local", ("true",))
    head = ev.JobRecorded.of(spec, StoreIdentity("memory", "m"))
    with pytest.raises(RecordInconsistent, match="pruned before"):
        fold_events([(at, head), (at, ev.Pruned())])
    assert ev.decode(*ev.encode(ev.Pruned())) == ev.Pruned()


def test_a_residual_list_that_refuses_the_entry_leaves_the_job_unpruned_and_says_so() -> None:
    class Refusing(InMemoryResidualList):
        def add(self, entry: ResidualEntry) -> bool:
            raise OSError("disk full")

    r = rig()
    job = _settled(r)
    r.clock.advance(days=31)
    pruning = Prune(r.store, Refusing(), InMemoryPointers(), r.clock, NoCrash())
    done, problems = pruning.older_than(timedelta(days=30))
    assert done == [] and problems == [f"job {job} was not pruned: disk full"]
    one = pruning.one(job)
    assert one.result is Pruning.REFUSED and "disk full" in one.detail
    assert "pruned" not in r.kinds(job)


@pytest.mark.parametrize("text", ["999999999w", "999999999d", "36501d"])
def test_prune_older_than_999999999w_is_bad_input_not_an_overflow(text: str) -> None:
    with pytest.raises(BadDuration, match="longer than 100 years"):
        parse_duration(text)
    assert parse_duration("36500d") == timedelta(days=36500)
