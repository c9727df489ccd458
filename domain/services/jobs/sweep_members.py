"""Which jobs a user's word names: a job (``exp-7``, an element, is an ordinary job), or a sweep's elements.

The one rule every command on a sweep uses (status, cancel, hold, release, give-up, resubmit):

- ``NAME`` names the job recorded under that name when there is one (every job command read it so before
  sweeps, and an element ``NAME-7`` is such a job); else the sweep NAME, every one of its elements;
- ``NAME`` with a state (``--state failed``) names the sweep's elements in that state (a job of its own
  has no elements to choose from: refused).

It reads summaries only (kept by the store with every append): one ``summaries`` query for a sweep,
never a fold per element.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery
from dunscaith.ports.job_store import JobStore, UnknownJob


class NotASweep(JobsError, ValueError):
    """A state was given to choose elements, but the word names a job of its own (or nothing)."""


@dataclass(frozen=True, slots=True)
class Chosen:
    """What a word named: one job (``sweep`` None), or elements of a sweep (``elements``, by index)."""

    word: JobId
    sweep: JobId | None  # the sweep the elements are of; None: ``word`` is one job
    elements: tuple[JobSummary, ...] = ()  # the chosen elements, by index (a sweep only)
    total: int = 0  # how many elements the sweep has, chosen or not (a sweep only)
    state: str | None = None  # the state the elements were chosen by, if any

    @property
    def jobs(self) -> list[JobId]:
        """The jobs named: the one job, or the chosen elements by index."""
        return [self.word] if self.sweep is None else [s.job for s in self.elements]


def index_key(summary: JobSummary) -> tuple[int, str]:
    """An element's place in its sweep: by index (a job of its own first), then by name."""
    return (summary.sweep_index if summary.sweep_index is not None else -1, summary.job)


def by_index(summaries: Sequence[JobSummary]) -> list[JobSummary]:
    return sorted(summaries, key=index_key)


class SweepMembers:
    def __init__(self, store: JobStore) -> None:
        self._store = store

    def elements(self, sweep: JobId, *, include_pruned: bool = True) -> list[JobSummary]:
        """Every element of ``sweep``, by index: one summaries query (empty when no such sweep is recorded).

        The store filters by sweep; the check here costs nothing and keeps a store that could not filter
        (one that does not yet keep the sweep with its summaries) from naming another job."""
        query = SummaryQuery(include_pruned=include_pruned, sweep=sweep)
        return by_index([s for s in self._store.summaries(query) if s.sweep == sweep])

    def resolve(self, word: str, state: str | None = None) -> Chosen:
        """What ``word`` (and ``state``) names; UnknownJob when it is neither a job nor a sweep recorded here,
        NotASweep when a state is given for a job of its own."""
        name = JobId(word)
        if state is None:
            try:
                self._store.summary(name)
                return Chosen(name, None)
            except UnknownJob as unknown:
                elements = self.elements(name)
                if not elements:
                    raise unknown from None
                return Chosen(name, name, tuple(elements), len(elements))
        every = self.whole(word, "--state")
        return Chosen(name, name, tuple(s for s in every.elements if s.state == state), every.total, state)

    def whole(self, word: str, option: str) -> Chosen:
        """Every element of the sweep ``word``, which ``option`` requires: UnknownJob when nothing of that
        name is recorded, NotASweep when it is a job of its own."""
        name = JobId(word)
        every = self.elements(name)
        if not every:
            try:
                self._store.summary(name)
            except UnknownJob:
                raise UnknownJob(f"no job or sweep named {word} is recorded") from None
            raise NotASweep(f"{word} is a job of its own, not a sweep: {option} chooses elements of a sweep")
        return Chosen(name, name, tuple(every), len(every))
