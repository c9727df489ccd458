"""Where a supervisor reports what it committed: the live view, the pointer file, escalation delivery."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from dunscaith.domain.model.jobs.events import Event
from dunscaith.domain.model.jobs.state import JobState


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
