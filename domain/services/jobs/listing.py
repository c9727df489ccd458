"""List and the Unattended notice: from the summaries the store keeps, never by folding every record.

``list`` asks the store for the summaries it shows (filtered, newest first, a page at a time) and folds
only those records, so a page costs the same with a thousand jobs or a hundred thousand; a record that
does not read is listed as damaged, never a reason to stop (issue 10). The notice asks for the records
not settled (an index) and probes only their locks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from dunscaith.domain.model.jobs.attendance import loop_stale, unattended_here
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import LoopHealth
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery
from dunscaith.domain.services.jobs.status import JobView, judge
from dunscaith.ports.clock import Clock
from dunscaith.ports.job_store import JobStore, RecordDamaged

# list asks the locks of this many jobs at once: a page in one query, memory still flat for --json
_LOCKS_AT_ONCE = 100


@dataclass(frozen=True, slots=True)
class ListedJob:
    summary: JobSummary
    health: LoopHealth
    left: int  # work outstanding, as status counts it under this configuration
    unattended: bool  # exact: the lock is this host's
    loop_unhealthy: bool  # display only


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A listed job whose record does not read: listed with why, never dropped."""

    job: JobId
    problem: str


class JobListing:
    def __init__(self, store: JobStore, clock: Clock, poll: float, delivering: bool = False) -> None:
        self._store = store
        self._clock = clock
        self._poll = poll
        self._delivering = delivering

    def now(self) -> datetime:
        """The time the views are judged at (what ``--since 2d`` counts back from, what elapsed runs to)."""
        return self._clock.now()

    def views(self, query: SummaryQuery) -> Iterator[JobView | Unreadable]:
        """The jobs ``query`` asks for, newest first, as the store streams their summaries: each record
        folded as it is reached (one at a time: memory flat). A record that does not read is given as
        Unreadable, unless the query filters (a state, cluster or time it cannot be said to have)."""
        now = self._clock.now()
        page: list[JobSummary] = []
        for summary in self._store.summaries(query):
            page.append(summary)
            if len(page) == _LOCKS_AT_ONCE:
                yield from self._judged(page, query, now)
                page = []
        yield from self._judged(page, query, now)

    def _judged(self, page: list[JobSummary], query: SummaryQuery, now: datetime) -> Iterator[JobView | Unreadable]:
        """A few summaries' jobs, their locks asked at once (one query on a server), each record folded
        as it is reached."""
        healths = self._store.healths([s.job for s in page]) if page else {}
        for summary in page:
            try:
                state = fold(self._store.read(summary.job))
            except (JobsError, RecordDamaged) as exc:  # its damage only: every other job still lists
                if not query.filtered:
                    yield Unreadable(summary.job, f"record does not read: {exc}")
                continue
            health = healths.get(summary.job, LoopHealth(held=False, last_loop=None))
            yield judge(state, health, now, self._poll, self._delivering)

    def count(self, query: SummaryQuery) -> int:
        return self._store.count(query)

    def unattended(self) -> list[ListedJob]:
        """Jobs with work left and no supervisor: the records not settled (an index) whose lock no one
        holds, asked of the store at once (one query on a server)."""
        now = self._clock.now()
        alone = self._store.unattended()  # not settled, no lock held: one query on a server, whatever their number
        listed = (self._listed(s, LoopHealth(held=False, last_loop=None), now) for s in alone)
        return [job for job in listed if job.unattended]

    def _listed(self, summary: JobSummary, health: LoopHealth, now: datetime) -> ListedJob:
        readable = summary.problem is None
        return ListedJob(summary, health, summary.left(delivering=self._delivering),
                         unattended=readable and unattended_here(summary.settled, health),
                         loop_unhealthy=loop_stale(health, now, self._poll))
