"""A supervisor whose scheduler watches its objects (``WatchesChanges``: the local scheduler's inotify and
pidfd) sleeps in one wait, and the object's change wakes it: the end is queried and recorded at once,
with the clock where the change happened, not at the next poll."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.supervise import Ending, SuperviseSettings, Supervisor
from dunscaith.ports.scheduler import WatchesChanges
from tests.expect import present
from tests.unit.jobs.helpers import StopAfter, rig

POLL = 10.0


class _Watch:
    def __init__(self, owner: WatchingScheduler, ids: list[ObjectId], changed: Callable[[], None]) -> None:
        self.owner, self.ids, self.changed, self.closed = owner, ids, changed, False

    def close(self) -> None:
        self.closed = True


class WatchingScheduler(FakeScheduler):
    """The fake scheduler, with the watch the local one has: ``change`` is an object's change announced."""

    def __init__(self) -> None:
        super().__init__(exit_code_of=None)
        self.watches: list[_Watch] = []

    def watch_changes(self, object_ids: Sequence[ObjectId], changed: Callable[[], None]) -> _Watch:
        self.watches.append(_Watch(self, list(object_ids), changed))
        changed()  # as the port says: once at once, for a change made before the watch began
        return self.watches[-1]

    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        raise AssertionError("a watched scheduler is not asked in slices")

    def change(self, object_id: ObjectId) -> None:
        for watch in self.watches:
            if not watch.closed and object_id in watch.ids:
                watch.changed()


class Waking(StopAfter):
    """The loop's waits: ``at(n)`` runs before the n-th; a wake ends a wait with the clock where it was."""

    def __init__(self, clock: FakeClock, waits: int, at: Callable[[int], None]) -> None:
        super().__init__(clock, waits)
        self.at, self.n, self.woken = at, 0, False
        self.pauses: list[float] = []

    def wake(self) -> None:
        self.woken = True

    def wait(self, seconds: float) -> str | None:
        self.n += 1
        self.pauses.append(seconds)
        self.at(self.n)
        if self.woken:
            self.woken = False
            return super().wait(0.0)
        return super().wait(seconds)


def _supervisor(scheduler: FakeScheduler) -> tuple[Supervisor, FakeClock, JobId, object]:
    r = rig(exit_code=None, poll=POLL, giveup=10_000.0)
    counter = iter(range(1, 1000))
    supervisor = Supervisor(r.store, scheduler, r.clock, r.crash, r.progress,
                            SuperviseSettings(poll=POLL, giveup=10_000.0, wait=10.0, drain=2.0),
                            Policy(absence_deadline=timedelta(seconds=5.0)),
                            nonces=lambda: Nonce(f"n{next(counter)}"), residual=r.residual)
    return supervisor, r.clock, r.record(), r


def test_the_fake_watching_scheduler_is_the_port_s_watching_kind() -> None:
    assert isinstance(WatchingScheduler(), WatchesChanges)
    assert not isinstance(FakeScheduler(), WatchesChanges)  # as Slurm: asked in slices, polled


def test_an_objects_end_wakes_the_supervisor_and_is_recorded_with_the_clock_where_it_ended() -> None:
    scheduler = WatchingScheduler()
    supervisor, clock, job, r = _supervisor(scheduler)
    store = r.store  # type: ignore[attr-defined]
    ended_at: list[object] = []

    def at(n: int) -> None:
        if n == 40:  # settled in by then: the pause ahead is a long one
            oid = present(present(fold(store.read(job)).current).object_id)
            scheduler.finish(oid, exit_code=0)
            ended_at.append(clock.now())
            scheduler.change(oid)

    cancel = Waking(clock, 200, at)
    with store.lock(job) as lock:
        end = supervise_one(supervisor, job, lock, cancel)
    assert end.ending is Ending.OUTCOME
    assert cancel.pauses[39] > 1.0  # it would have slept on
    lines = store.read(job).events
    kinds = [line.kind for line in lines]
    assert kinds[-3:] == [ev.Observed.KIND, ev.OutcomeReached.KIND, ev.Settled.KIND]
    assert next(line.at for line in lines if line.kind == ev.OutcomeReached.KIND) == ended_at[0]


def test_the_watch_follows_the_objects_worth_watching_and_is_closed_at_the_end() -> None:
    scheduler = WatchingScheduler()
    supervisor, clock, job, r = _supervisor(scheduler)
    store = r.store  # type: ignore[attr-defined]

    def at(n: int) -> None:
        if n == 10:
            oid = present(present(fold(store.read(job)).current).object_id)
            scheduler.finish(oid, exit_code=0)
            scheduler.change(oid)

    with store.lock(job) as lock:
        supervise_one(supervisor, job, lock, Waking(clock, 100, at))
    assert scheduler.watches, "a released object is watched"
    assert all(watch.closed for watch in scheduler.watches)
    oid = present(present(fold(store.read(job)).current).object_id)
    assert all(watch.ids == [oid] for watch in scheduler.watches)
    assert len(scheduler.watches) == 1  # one watch for the object's whole run, not one per pause


class SlicingScheduler(FakeScheduler):
    """A scheduler with no watch of its objects that can wait for their end (the local one without
    inotify): ``wait_for_change`` blocks for its slice, and says at the ``end_at``-th that the object ended."""

    def __init__(self, clock: FakeClock, end_at: int) -> None:
        super().__init__(exit_code_of=None)
        self.clock, self.end_at, self.slices = clock, end_at, 0
        self.ended_at: list[object] = []

    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        self.slices += 1
        if self.slices == self.end_at:
            self.finish(object_ids[0], exit_code=0)
            self.ended_at.append(self.clock.now())
            return True
        self.clock.sleep(timeout)
        return False


def test_a_job_alone_whose_scheduler_only_waits_for_an_end_is_asked_in_slices_and_its_end_recorded_at_once() -> None:
    scheduler = SlicingScheduler(FakeClock(), end_at=60)
    supervisor, clock, job, r = _supervisor(scheduler)
    store = r.store  # type: ignore[attr-defined]
    scheduler.clock = clock
    with store.lock(job) as lock:
        end = supervise_one(supervisor, job, lock, StopAfter(clock, 400))
    assert end.ending is Ending.OUTCOME
    assert scheduler.slices == 60  # asked in slices until it said the object ended, not once more
    lines = store.read(job).events
    assert next(line.at for line in lines if line.kind == ev.OutcomeReached.KIND) == scheduler.ended_at[0]
