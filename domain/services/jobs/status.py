"""Status: what the record says about one job, and whether anyone is watching it (list: listing.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from dunscaith.domain.model.jobs.attendance import loop_stale, unattended_here
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectTimes
from dunscaith.domain.model.jobs.record import LoopHealth
from dunscaith.domain.model.jobs.settlement import Outstanding, outstanding
from dunscaith.domain.model.jobs.snapshot import resumed
from dunscaith.domain.model.jobs.state import AttemptState, JobState, fold, label
from dunscaith.domain.model.shown import reason
from dunscaith.domain.services.jobs.gates import Gates, blocked_line
from dunscaith.ports.clock import Clock
from dunscaith.ports.job_store import JobStore
from dunscaith.ports.scheduler import Scheduler


@dataclass(frozen=True, slots=True)
class LiveState:
    """What the scheduler says of an Unattended job's current object now (the record may lag)."""

    state: str | None  # the object's state word, None when the scheduler did not list it or was not reached
    detail: str = ""
    asked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class JobView:
    state: JobState
    label: str
    health: LoopHealth
    left: tuple[Outstanding, ...]
    unattended: bool  # work remains and no supervisor holds the lock (exact: this is the owning host)
    loop_unhealthy: bool  # display only: the holder's last loop is older than three poll intervals
    live: LiveState | None = None  # asked of the scheduler (status of an Unattended job); None: not asked
    scheduler_times: SchedulerTimes | None = None  # the scheduler's own times of its objects; None: not asked
    sweep_held: bool = False  # an element whose sweep's live supervisor holds it (waiting for a slot)
    # a job not started that waits for other jobs (submit --after, a pipeline's step): the dependency rule's
    # line, "waiting for study.train" or "blocked by study.train (study.train-1 failed)"; None otherwise
    gate: str | None = None


@dataclass(frozen=True, slots=True)
class SchedulerTimes:
    """What the job's scheduler says of its attempts' objects' times, beside those the record saw.

    ``by_object`` holds each object it still knows; ``problem`` says why it could not be asked ("" when
    it was): display only, the record stands."""

    by_object: Mapping[ObjectId, ObjectTimes]
    problem: str = ""


def judge(state: JobState, health: LoopHealth, now: datetime, poll: float, delivering: bool = False,
          sweep_held: bool = False) -> JobView:
    """``sweep_held``: the job is an element and its sweep's lock is held (sweep_lock.py)."""
    left = tuple(outstanding(state, delivering=delivering))
    return JobView(state, label(state), health, left, unattended=unattended_here(state.settled, health, sweep_held),
                   loop_unhealthy=loop_stale(health, now, poll), sweep_held=sweep_held and not state.settled)


class JobStatus:
    def __init__(self, store: JobStore, clock: Clock, poll: float, delivering: bool = False,
                 schedulers: Callable[[str], Scheduler] | None = None) -> None:
        self._store = store
        self._clock = clock
        self._poll = poll
        self._delivering = delivering
        self._schedulers = schedulers

    def one(self, job: JobId, *, live: bool = False, times: bool = False) -> JobView:
        """UnknownJob when not recorded; JobsError (EventUndecodable, RecordInconsistent) or RecordDamaged
        (the store could not give its events back) when it does not read.

        With ``live``, an Unattended job's current object is also asked of its scheduler (read-only; on
        Slurm the query is the host's shared one), since no supervisor keeps the record up to date. With
        ``times``, the scheduler's own submit/start/end times of every attempt's object (read-only)."""
        # A long record is folded from its newest snapshot on; when that does not serve (another build's,
        # or the events after it do not fold), the whole record is, and says why as it always has.
        state = resumed(self._store.read_tail(job))
        if state is None:
            state = fold(self._store.read(job))
        member = state.spec.member
        sweep_held = member is not None and not state.settled and self._store.health(member.sweep).held
        view = judge(state, self._store.health(job), self._clock.now(), self._poll, self._delivering, sweep_held)
        if state.spec.waits and not state.attempts and state.outcome is None:
            view = replace(view, gate=blocked_line(Gates(self._store).readiness(state.spec)))
        if live and view.unattended and self._schedulers is not None:
            view = replace(view, live=self._ask(state))
        if times and self._schedulers is not None:
            view = replace(view, scheduler_times=self._times(state))
        return view

    def _times(self, state: JobState) -> SchedulerTimes:
        ids = [a.object_id for a in state.attempts if a.object_id is not None]
        if not ids:
            return SchedulerTimes({})
        assert self._schedulers is not None
        try:
            return SchedulerTimes(self._schedulers(state.spec.cluster).times(ids))
        except Exception as exc:  # display only: the record's own times stand
            return SchedulerTimes({}, f"the scheduler was not asked: {reason(exc)}")

    def _ask(self, state: JobState) -> LiveState | None:
        current = state.current
        if current is None or (current.object_id is None and current.order is not AttemptState.UNKNOWN):
            return None
        assert self._schedulers is not None
        try:
            result = self._schedulers(state.spec.cluster).query([state.name], confirm_absent=True)
        except Exception as exc:  # display only: the record stands, and says what it says
            return LiveState(None, f"the scheduler was not asked: {reason(exc)}")
        mine = [o for o in result.objects if o.nonce == current.nonce]
        asked = result.asked_at or self._clock.now()
        if not mine:
            why = "not listed by the scheduler" if result.complete else f"answered in part: {result.detail}"
            return LiveState(None, why, asked)
        obj = mine[0]
        code = f", exit code {obj.exit_code}" if obj.exit_code is not None else ""
        why = f": {obj.reason}" if obj.reason else ""  # "disk full: ..." while an outcome waits for space
        return LiveState(str(obj.state), f"{obj.object_id} {obj.state}{code}{why}", asked)
