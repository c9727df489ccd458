"""Which jobs a user's word names: a job (``exp-7``, an element, is an ordinary job), or a sweep's elements.

The one rule every command on a sweep uses (status, cancel, hold, release, give-up, resubmit):

- ``NAME`` names the job recorded under that name when there is one (every job command read it so before
  sweeps, and an element ``NAME-7`` is such a job); else the sweep NAME, every one of its elements; else
  the pipeline NAME (docs/pipelines.md), every job of every step of it (``NAME.reduce`` is a job, or a
  sweep, by the first two);
- ``NAME`` with a state (``--state failed``) names the sweep's elements in that state (a job of its own
  has no elements to choose from, and a pipeline's steps are chosen by name, ``NAME.STEP --state S``:
  both refused).

It reads summaries only (kept by the store with every append): one ``summaries`` query for a sweep,
never a fold per element; a pipeline adds one query by its name's prefix and one first event per step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery
from dunscaith.ports.job_store import JobStore, UnknownJob


class NotASweep(JobsError, ValueError):
    """A state was given to choose elements, but the word names a job of its own (or nothing)."""


@dataclass(frozen=True, slots=True)
class Chosen:
    """What a word named: one job (``sweep`` and ``pipeline`` None), elements of a sweep (``elements``, by
    index), or every job of a pipeline's steps (``pipeline``; ``elements`` step by step)."""

    word: JobId
    sweep: JobId | None  # the sweep the elements are of; None: ``word`` is one job (or a pipeline)
    elements: tuple[JobSummary, ...] = ()  # the chosen elements, by index (a sweep, or a pipeline's jobs)
    total: int = 0  # how many elements the sweep (or jobs the pipeline) has, chosen or not
    state: str | None = None  # the state the elements were chosen by, if any
    pipeline: JobId | None = None  # the pipeline whose steps' jobs ``elements`` are

    @property
    def jobs(self) -> list[JobId]:
        """The jobs named: the one job, or the chosen elements by index (a pipeline's, step by step)."""
        return [self.word] if self.one else [s.job for s in self.elements]

    @property
    def one(self) -> bool:
        """Whether the word named one job (neither a sweep nor a pipeline)."""
        return self.sweep is None and self.pipeline is None

    @property
    def what(self) -> str:
        """``sweep NAME`` or ``pipeline NAME``, as a command's summary line names what it acted on."""
        return f"pipeline {self.pipeline}" if self.pipeline is not None else f"sweep {self.sweep}"


def index_key(summary: JobSummary) -> tuple[int, str]:
    """An element's place in its sweep: by index (a job of its own first), then by name."""
    return (summary.sweep_index if summary.sweep_index is not None else -1, summary.job)


def by_index(summaries: Sequence[JobSummary]) -> list[JobSummary]:
    return sorted(summaries, key=index_key)


# a pipeline's jobs by its name (pipeline_status.pipeline_members), None when none is recorded so named:
# given, since the pipeline is found through the gates, which read sweeps' members through this module
PipelineFinder = Callable[[JobId], Sequence[JobSummary] | None]


class SweepMembers:
    def __init__(self, store: JobStore, pipelines: PipelineFinder | None = None) -> None:
        self._store = store
        self._pipelines = pipelines

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
                if elements:
                    return Chosen(name, name, tuple(elements), len(elements))
                pipeline = self.pipeline(name)
                if pipeline is None:
                    raise unknown from None
                return pipeline
        every = self.whole(word, "--state")
        if every.pipeline is not None:
            raise NotASweep(
                f"{word} is a pipeline: --state chooses elements of a sweep; give one of its steps "
                f"({word}.STEP --state {state})"
            )
        return replace(every, elements=tuple(s for s in every.elements if s.state == state), state=state)

    def whole(self, word: str, option: str) -> Chosen:
        """Every element of the sweep ``word`` (or every job of the pipeline ``word``), which ``option``
        requires: UnknownJob when nothing of that name is recorded, NotASweep when it is a job of its own."""
        name = JobId(word)
        every = self.elements(name)
        if not every:
            try:
                self._store.summary(name)
            except UnknownJob:
                pipeline = self.pipeline(name)
                if pipeline is not None:
                    return pipeline
                raise UnknownJob(f"no job, sweep or pipeline named {word} is recorded") from None
            raise NotASweep(
                f"{word} is a job of its own, not a sweep: {option} chooses elements of a sweep or jobs of a pipeline"
            )
        return Chosen(name, name, tuple(every), len(every))

    def pipeline(self, name: JobId) -> Chosen | None:
        """Every job of every step of the pipeline ``name`` (step by step, a sweep's elements by index), or
        None when no job records it is a step of a pipeline so named (or no finder was given)."""
        found = self._pipelines(name) if self._pipelines is not None else None
        if found is None:
            return None
        return Chosen(name, None, tuple(found), len(found), pipeline=name)
