"""Keep the job's pointer in step with its record: the state on every change, supervised-at rarely.

Everything written here is for display; nothing about safety reads a pointer. A failure to write one
is reported to ``on_problem`` and never stops supervision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from dunscaith.domain.model.jobs.events import Event
from dunscaith.domain.model.jobs.pointer import Pointer, supervised_at_due
from dunscaith.domain.model.jobs.state import JobState, label
from dunscaith.domain.model.shown import reason
from dunscaith.ports.job_progress import JobProgress
from dunscaith.ports.pointers import Pointers


class PointerNotes:
    def __init__(self, pointers: Pointers, pointer: Pointer, poll: float,
                 on_problem: Callable[[str], None] = lambda _m: None) -> None:
        self._pointers = pointers
        self._pointer = pointer
        self._poll = timedelta(seconds=poll)
        self._on_problem = on_problem
        self._written_supervised: datetime | None = None
        self._failing: str | None = None  # the problem last reported: said once, not on every change

    def committed(self, state: JobState, event: Event) -> None:
        word = label(state)
        if word != self._pointer.state:
            self._write(self._pointer.with_state(word, state.updated_at or state.recorded_at))

    def note(self, text: str) -> None:
        pass  # the pointer keeps the state only

    def supervised(self, state: JobState, at: datetime) -> None:
        if supervised_at_due(self._written_supervised, at, self._poll):
            self._written_supervised = at
            self._write(self._pointer.with_supervised(at), refresh=True)

    def _write(self, pointer: Pointer, *, refresh: bool = False) -> None:
        self._pointer = pointer
        try:
            self._pointers.write(pointer, refresh=refresh)
        except Exception as exc:  # display only: a home directory that refuses a write stops nothing
            problem = reason(exc)
            if problem != self._failing:
                self._on_problem(f"pointer of {pointer.job} not updated: {problem} (said once; the record is "
                                 "kept as always, and other login nodes see the pointer's last state)")
            self._failing = problem
        else:
            self._failing = None


class Fanout:
    """Several progress reporters behind one; a failing one never stops the others or the supervisor."""

    def __init__(self, reporters: Sequence[JobProgress]) -> None:
        self._reporters = tuple(reporters)

    def committed(self, state: JobState, event: Event) -> None:
        for reporter in self._reporters:
            try:
                reporter.committed(state, event)
            except Exception:  # display only
                pass

    def supervised(self, state: JobState, at: datetime) -> None:
        for reporter in self._reporters:
            try:
                reporter.supervised(state, at)
            except Exception:  # display only
                pass

    def note(self, text: str) -> None:
        for reporter in self._reporters:
            try:
                reporter.note(text)
            except Exception:  # display only
                pass
