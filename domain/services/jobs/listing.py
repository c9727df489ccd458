"""List and the Unattended notice: from the summaries the store keeps, never by folding every record."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from domain.model.jobs.attendance import loop_stale, unattended_here
from domain.model.jobs.record import LoopHealth
from domain.model.jobs.summary import JobSummary, SummaryQuery
from ports.clock import Clock
from ports.job_store import JobStore


@dataclass(frozen=True, slots=True)
class ListedJob:
    summary: JobSummary
    health: LoopHealth
    left: int  # work outstanding, as status counts it under this configuration
    unattended: bool  # exact: the lock is this host's
    loop_unhealthy: bool  # display only


class JobListing:
    def __init__(self, store: JobStore, clock: Clock, poll: float, delivering: bool = False) -> None:
        self._store = store
        self._clock = clock
        self._poll = poll
        self._delivering = delivering

    def page(self, query: SummaryQuery) -> Iterator[ListedJob]:
        """The jobs ``query`` asks for, newest first, as the store streams them (one lock probe each)."""
        now = self._clock.now()
        for summary in self._store.summaries(query):
            yield self._listed(summary, now)

    def count(self, query: SummaryQuery) -> int:
        return self._store.count(query)

    def unattended(self) -> list[ListedJob]:
        """Jobs with work left and no supervisor: the records not settled (an index), then their locks."""
        now = self._clock.now()
        return [listed for listed in (self._listed(s, now) for s in self._store.unsettled()) if listed.unattended]

    def _listed(self, summary: JobSummary, now: datetime) -> ListedJob:
        health = self._store.health(summary.job)
        readable = summary.problem is None
        return ListedJob(summary, health, summary.left(delivering=self._delivering),
                         unattended=readable and unattended_here(summary.settled, health),
                         loop_unhealthy=loop_stale(health, now, self._poll))
