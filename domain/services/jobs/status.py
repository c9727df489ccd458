"""Status and List: what the record says about a job, and whether anyone is watching it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from domain.model.jobs.errors import JobsError
from domain.model.jobs.ids import JobId
from domain.model.jobs.record import LoopHealth
from domain.model.jobs.settlement import Outstanding, outstanding
from domain.model.jobs.state import JobState, fold, label
from ports.clock import Clock
from ports.job_store import JobStore, RecordDamaged


@dataclass(frozen=True, slots=True)
class JobView:
    state: JobState
    label: str
    health: LoopHealth
    left: tuple[Outstanding, ...]
    unattended: bool  # work remains and no supervisor holds the lock (exact: this is the owning host)
    loop_unhealthy: bool  # display only: the holder's last loop is older than three poll intervals


def judge(state: JobState, health: LoopHealth, now: datetime, poll: float, delivering: bool = False) -> JobView:
    left = tuple(outstanding(state, delivering=delivering))
    open_work = not state.settled  # something is left to do, if only committing the settlement
    stale = health.held and (health.last_loop is None or now - health.last_loop > timedelta(seconds=3 * poll))
    return JobView(state, label(state), health, left, unattended=open_work and not health.held,
                   loop_unhealthy=stale)


class JobStatus:
    def __init__(self, store: JobStore, clock: Clock, poll: float, delivering: bool = False) -> None:
        self._store = store
        self._clock = clock
        self._poll = poll
        self._delivering = delivering

    def one(self, job: JobId) -> JobView:
        """UnknownJob when not recorded; JobsError (EventUndecodable, RecordInconsistent) or RecordDamaged
        (the store could not give its events back) when it does not read."""
        state = fold(self._store.read(job))
        return judge(state, self._store.health(job), self._clock.now(), self._poll, self._delivering)

    def all(self) -> list[JobView | tuple[JobId, str]]:
        """Every job, oldest first; a record that does not read is listed with why, not dropped."""
        views: list[JobView | tuple[JobId, str]] = []
        for job in self._store.jobs():
            try:
                views.append(self.one(job))
            except (JobsError, RecordDamaged) as exc:  # its damage only: every other job still lists
                views.append((job, f"record does not read: {exc}"))
        return views

    def unattended(self) -> list[JobView]:
        return [v for v in self.all() if isinstance(v, JobView) and v.unattended]
