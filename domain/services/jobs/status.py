"""Status: what the record says about one job, and whether anyone is watching it (list: listing.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from domain.model.jobs.attendance import loop_stale, unattended_here
from domain.model.jobs.ids import JobId
from domain.model.jobs.record import LoopHealth
from domain.model.jobs.settlement import Outstanding, outstanding
from domain.model.jobs.state import JobState, fold, label
from ports.clock import Clock
from ports.job_store import JobStore


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
    return JobView(state, label(state), health, left, unattended=unattended_here(state.settled, health),
                   loop_unhealthy=loop_stale(health, now, poll))


class JobStatus:
    def __init__(self, store: JobStore, clock: Clock, poll: float, delivering: bool = False) -> None:
        self._store = store
        self._clock = clock
        self._poll = poll
        self._delivering = delivering

    def one(self, job: JobId) -> JobView:
        """UnknownJob when not recorded; JobsError (EventUndecodable, RecordInconsistent) when it does not read."""
        state = fold(self._store.read(job))
        return judge(state, self._store.health(job), self._clock.now(), self._poll, self._delivering)
