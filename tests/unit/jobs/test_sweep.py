"""Residual sweeps on fakes: one request per cluster, never a running or foreign object, expiry reported."""

from __future__ import annotations

from collections.abc import Sequence

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectSpec, ObjectState, QueryResult
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReason
from dunscaith.domain.services.jobs.sweep import Sweep


def _make(scheduler: FakeScheduler, job: str, nonce: str) -> ObjectId:
    answer = scheduler.create_held(ObjectSpec(JobId(job), Nonce(nonce), ("true",)))
    assert answer.object_id is not None
    return answer.object_id


def _entry(clock: FakeClock, job: str, nonce: str | None, attempt: int | None = 1, cluster: str = "local",
           reason: ResidualReason = ResidualReason.UNKNOWN) -> ResidualEntry:
    return ResidualEntry(JobId(job), cluster, "local", reason, attempt, None if nonce is None else Nonce(nonce),
                         clock.now())


def _rig() -> tuple[FakeClock, FakeScheduler, InMemoryResidualList, Sweep]:
    clock, scheduler, residual = FakeClock(), FakeScheduler(), InMemoryResidualList()
    return clock, scheduler, residual, Sweep(residual, lambda cluster: scheduler, clock)


def test_a_sweep_stops_only_the_listed_attempts_not_started_object() -> None:
    clock, scheduler, residual, sweep = _rig()
    late = _make(scheduler, "j1", "n1")
    other_attempt = _make(scheduler, "j1", "n2")
    residual.add(_entry(clock, "j1", "n1"))
    report = sweep()
    assert report.stopped == [("local", late)] and report.problems == []
    assert scheduler.get(late).view.state is ObjectState.CANCELLED
    assert scheduler.get(other_attempt).view.state is ObjectState.HELD
    assert (scheduler.count("query"), scheduler.count("cancel_if_not_started")) == (1, 1)
    assert scheduler.log[-1] == ("cancel_if_not_started", (late,))  # exactly the chosen ids


def test_a_sweep_never_touches_a_running_a_started_or_a_foreign_object() -> None:
    clock, scheduler, residual, sweep = _rig()
    running = _make(scheduler, "j1", "n1")
    scheduler.release(running)
    scheduler.start(running)
    requeued = _make(scheduler, "j2", "n1")  # started once, pending again: it has started
    scheduler.release(requeued)
    scheduler.start(requeued)
    scheduler.requeue(requeued)
    theirs = scheduler.add_foreign(JobId("j3"), owner="someone-else")
    nobodys = scheduler.add_foreign(JobId("j3"), nonce=Nonce("not-ours"))
    residual.add(_entry(clock, "j1", "n1"))
    residual.add(_entry(clock, "j2", "n1"))
    residual.add(_entry(clock, "j3", "n1"))
    report = sweep()
    assert report.stopped == []
    assert scheduler.get(running).view.state is ObjectState.RUNNING
    assert scheduler.get(requeued).view.state is ObjectState.PENDING
    assert scheduler.get(theirs).view.state is ObjectState.HELD
    assert scheduler.get(nobodys).view.state is ObjectState.HELD
    assert scheduler.count("cancel") == 0 and scheduler.count("cancel_if_not_started") == 0


def test_a_pruned_job_has_any_of_its_not_started_objects_stopped_but_never_another_users() -> None:
    clock, scheduler, residual, sweep = _rig()
    a = _make(scheduler, "old", "n1")
    b = scheduler.add_foreign(JobId("old"), nonce=None, state=ObjectState.PENDING)
    theirs = scheduler.add_foreign(JobId("old"), owner="someone-else")
    residual.add(_entry(clock, "old", None, None, reason=ResidualReason.PRUNED))
    report = sweep()
    assert sorted(oid for _, oid in report.stopped) == sorted([a, b])
    assert scheduler.get(theirs).view.state is ObjectState.HELD


def test_every_cluster_on_the_list_is_asked_once_for_all_its_names() -> None:
    clock, residual = FakeClock(), InMemoryResidualList()
    schedulers = {"local": FakeScheduler(id_prefix="l-"), "hpc": FakeScheduler(id_prefix="h-")}
    for n in range(5):
        residual.add(_entry(clock, f"job{n}", "n1", cluster="hpc" if n % 2 else "local"))
    report = Sweep(residual, schedulers.__getitem__, clock)()
    assert report.swept == {"hpc": ["job1", "job3"], "local": ["job0", "job2", "job4"]}
    assert [s.count("query") for s in schedulers.values()] == [1, 1]
    assert schedulers["hpc"].log == [("query", ("job1", "job3"))]


def test_an_entry_expires_thirty_days_after_it_was_added_and_the_expiry_is_reported() -> None:
    clock, scheduler, residual, sweep = _rig()
    old = _entry(clock, "j1", "n1")
    residual.add(old)
    clock.advance(days=30, seconds=-1)
    assert sweep().expired == [] and len(residual.entries()) == 1
    clock.advance(seconds=1)
    report = sweep()
    assert report.expired == [old] and residual.entries() == []
    assert scheduler.count("query") == 1  # the expired entry's name is not looked up any more


def test_a_scheduler_that_cannot_be_asked_is_reported_and_the_entry_kept() -> None:
    clock, scheduler, residual, sweep = _rig()
    residual.add(_entry(clock, "j1", "n1"))
    scheduler.fail_next_query("controller down")
    report = sweep()
    assert report.stopped == [] and "controller down" in report.problems[0]
    assert len(residual.entries()) == 1


def test_a_cluster_that_cannot_be_opened_is_reported_and_the_others_are_swept() -> None:
    clock, residual = FakeClock(), InMemoryResidualList()
    local = FakeScheduler()
    oid = _make(local, "j1", "n1")
    residual.add(_entry(clock, "j1", "n1"))
    residual.add(_entry(clock, "j2", "n1", cluster="gone"))

    def schedulers(cluster: str) -> FakeScheduler:
        if cluster == "gone":
            raise ValueError("no cluster named 'gone'")
        return local

    report = Sweep(residual, schedulers, clock)()
    assert report.stopped == [("local", oid)] and "no cluster named 'gone'" in report.problems[0]


def test_an_answer_in_part_is_reported_and_what_it_shows_is_still_swept() -> None:
    clock, scheduler, residual, sweep = _rig()
    late = _make(scheduler, "j1", "n1")
    residual.add(_entry(clock, "j1", "n1"))
    real = scheduler.query

    def partial(names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        answer = real(names, confirm_absent=confirm_absent)
        return QueryResult(answer.objects, complete=False, detail="sacct: Connection refused")

    scheduler.query = partial  # type: ignore[method-assign]
    report = sweep()
    assert report.stopped == [("local", late)]
    assert report.problems == ["sweep of cluster local: the scheduler answered in part: sacct: Connection refused"]
    assert report.swept == {}


def test_a_cancel_that_fails_is_reported_and_the_entry_kept_for_the_next_sweep() -> None:
    clock, scheduler, residual, sweep = _rig()
    late = _make(scheduler, "j1", "n1")
    residual.add(_entry(clock, "j1", "n1"))
    scheduler.fail_next("cancel_if_not_started", "scancel: Socket timed out")
    report = sweep()
    assert report.stopped == [] and "Socket timed out" in report.problems[0]
    assert len(residual.entries()) == 1 and scheduler.get(late).view.state is ObjectState.HELD
    assert sweep().stopped == [("local", late)]


def test_an_object_that_started_between_the_query_and_the_cancel_is_left_alone() -> None:
    clock, scheduler, residual, sweep = _rig()
    late = _make(scheduler, "j1", "n1")
    residual.add(_entry(clock, "j1", "n1"))
    real = scheduler.cancel_if_not_started

    def started_meanwhile(object_ids: Sequence[ObjectId]) -> list[ObjectId]:
        scheduler.release(late)
        scheduler.start(late)
        return real(object_ids)

    scheduler.cancel_if_not_started = started_meanwhile  # type: ignore[method-assign]
    report = sweep()
    assert report.stopped == [] and report.problems == []
    assert scheduler.get(late).view.state is ObjectState.RUNNING
