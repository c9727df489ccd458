"""Where a supervisor reports what it committed: the live view, the pointer file, escalation delivery."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from dunscaith.domain.model.jobs.events import Event
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.domain.model.jobs.summary import JobSummary


class JobProgress(Protocol):
    def committed(self, state: JobState, event: Event) -> None:
        """``event`` is durable; ``state`` is the job with it applied. Must not raise."""
        ...

    def supervised(self, state: JobState, at: datetime) -> None:
        """The supervisor's loop is alive at ``at`` (called at most every ten poll intervals)."""
        ...

    def note(self, text: str) -> None:
        """A change in how the supervisor works that its user should see (not an event of the record:
        the store's notice of appends lost or back). Must not raise."""
        ...

class SupervisionView(JobProgress, Protocol):
    """The live view of one supervision: what the supervisor commits, the job's state before the first
    change, and lines of its own; shown from ``__enter__`` to ``__exit__``."""

    def show(self, state: JobState) -> None: ...

    def line(self, text: str) -> None: ...

    def __enter__(self) -> SupervisionView: ...

    def __exit__(self, *exc: object) -> None: ...


class SweepSupervisionView(Protocol):
    """The live view of one supervision of a sweep: counts by state, the elapsed time, the last changes;
    shown from ``__enter__`` to ``__exit__``."""

    def show(self, elements: Sequence[JobSummary]) -> None:
        """Every element as the store summarises it (before the first change, and after the last)."""
        ...

    def element(self, job: JobId) -> JobProgress:
        """Where one element's supervisor reports what it commits."""
        ...

    def ended(self, job: JobId, ending: str, state: JobState | None) -> None:
        """This process's supervision of ``job`` ended (``ending``: outcome, drained, gave-up, outstanding)."""
        ...

    def line(self, text: str) -> None: ...

    def held(self, words: Mapping[JobId, str]) -> None:
        """Jobs not created because of what they wait for, and the word for each (waiting, blocked): shown
        so instead of their records' "recorded"."""
        ...

    def refresh(self) -> None:
        """A round of the loop is over: show what changed in it (the elapsed time at least, at a terminal)."""
        ...

    def __enter__(self) -> SweepSupervisionView: ...

    def __exit__(self, *exc: object) -> None: ...
