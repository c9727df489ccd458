"""Keep the job's pointer in step with its record: the state on every change, supervised-at rarely.

Everything written here is for display; nothing about safety reads a pointer. A failure to write one
is reported to ``on_problem`` and never stops supervision.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta

from dunscaith.domain.model.jobs.attendance import attendance_stale
from dunscaith.domain.model.jobs.events import Event
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import SUPERVISED_REFRESH_POLLS, Pointer, supervised_at_due
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.state import JobState, label
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.model.jobs.sweep_attendance import SweepAttendance
from dunscaith.domain.model.shown import reason
from dunscaith.ports.job_progress import JobProgress
from dunscaith.ports.pointers import Pointers


class SaidOnce:
    """Display-only writes (a pointer, a sweep's attendance) whose failure is told to ``on_problem`` once, not
    on every write while it lasts: a home directory that refuses a write stops nothing."""

    def __init__(self, on_problem: Callable[[str], None]) -> None:
        self._on_problem = on_problem
        self._failing: str | None = None  # the problem last told

    def write(self, write: Callable[[], None], says: Callable[[str], str]) -> None:
        """``write``; when it fails, ``says`` of why (once for the same why until a write succeeds)."""
        try:
            write()
        except Exception as exc:  # display only
            self.problem(reason(exc), says)
        else:
            self._failing = None

    def problem(self, problem: str, says: Callable[[str], str] = lambda problem: problem) -> None:
        if problem != self._failing:
            self._on_problem(says(problem))
        self._failing = problem


class PointerBatch:
    """The pointers of the many jobs one pass supervises (a sweep's elements), kept in step together: each
    job's newest pointer is kept as its supervisor commits, and all of them are written when the pass ends,
    in one ``Pointers.write_many`` (a few syncs for the batch, where a ``write`` of each makes up to four:
    500 elements released at once made 1,000 writes and 1,500 syncs). Display only, as every pointer write:
    a kill before the pass ends leaves the older pointers, each whole, which ``status`` and ``reconcile``
    read past (the record is what counts). Written only by the thread that supervises."""

    def __init__(self, pointers: Pointers, on_problem: Callable[[str], None] = lambda _m: None) -> None:
        self._pointers = pointers
        self._said = SaidOnce(on_problem)
        self._due: dict[JobId, Pointer] = {}

    def write(self, pointer: Pointer, *, refresh: bool = False) -> None:
        """Kept until ``flush``: a later pointer of the same job replaces it (its notes carry every change)."""
        self._due[pointer.job] = pointer

    def flush(self) -> None:
        """Every pointer kept since the last flush written together; a failure is said once."""
        if not self._due:
            return
        due = list(self._due.values())
        self._due.clear()
        self._said.write(
            lambda: self._pointers.write_many(due),
            lambda problem: f"pointers of {len(due)} jobs not updated: {problem} (said once; the records are kept "
            "as always, and other login nodes see the pointers' last states)",
        )


class PointerNotes:
    def __init__(self, pointers: Pointers | PointerBatch, pointer: Pointer, poll: float,
                 on_problem: Callable[[str], None] = lambda _m: None) -> None:
        self._pointers = pointers
        self._pointer = pointer
        self._poll = timedelta(seconds=poll)
        self._said = SaidOnce(on_problem)
        self._written_supervised: datetime | None = None

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
        self._said.write(
            lambda: self._pointers.write(pointer, refresh=refresh),
            lambda problem: f"pointer of {pointer.job} not updated: {problem} (said once; the record is kept as "
            "always, and other login nodes see the pointer's last state)",
        )


class Fanout:
    """Several progress reporters behind one; a failing one never stops the others or the supervisor."""

    def __init__(self, reporters: Sequence[JobProgress]) -> None:
        self._reporters = tuple(reporters)

    def committed(self, state: JobState, event: Event) -> None:
        self._each(lambda reporter: reporter.committed(state, event))

    def supervised(self, state: JobState, at: datetime) -> None:
        self._each(lambda reporter: reporter.supervised(state, at))

    def note(self, text: str) -> None:
        self._each(lambda reporter: reporter.note(text))

    def _each(self, tell: Callable[[JobProgress], None]) -> None:
        for reporter in self._reporters:
            try:
                tell(reporter)
            except Exception:  # display only
                pass


class AttendanceNotes:
    """One supervising process's attendances (domain/model/jobs/sweep_attendance.py): for each sweep it holds
    elements of, one file naming them, written at most once every ten poll intervals in place of a refresh
    of each element's pointer, and removed when the supervision ends. Display only: a write that fails is
    said once and stops nothing."""

    def __init__(self, pointers: Pointers, poll: float, host: str,
                 on_problem: Callable[[str], None] = lambda _m: None) -> None:
        self._pointers = pointers
        self._poll = timedelta(seconds=poll)
        self.holder = f"{host}-{secrets.token_hex(4)}"  # this process's: two may hold parts of one sweep
        self._said = SaidOnce(on_problem)
        self._written: set[JobId] = set()
        self._waiting: dict[JobId, frozenset[int]] = {}  # each sweep's elements it holds by the sweep's lock
        self._at: datetime | None = None

    def holds_by_sweep(self, members: Iterable[JobSummary]) -> None:
        """The elements this process holds by their sweeps' locks (sweep_lock.py), started or waiting for a
        slot of --max-running: each refresh names them with the ones it supervises now, so another login
        node does not call the waiting ones Unattended. One that ends is named on: settled, it never is."""
        found: dict[JobId, set[int]] = {}
        for member in members:
            if member.sweep is not None and member.sweep_index is not None:
                found.setdefault(member.sweep, set()).add(member.sweep_index)
        self._waiting = {sweep: frozenset(indices) for sweep, indices in found.items()}

    def begin(self, sweeps: Sequence[JobId], now: datetime) -> None:
        """Remove what earlier supervisors of these sweeps left (killed before they could), once stale:
        a live one's is refreshed well within that time, and is never removed."""
        try:
            for attendance in self._pointers.attendances():
                if attendance.sweep in sweeps and attendance_stale(attendance, now, self._poll):
                    self._pointers.remove_attendance(attendance.sweep, attendance.holder)
        except Exception as exc:  # display only
            self._said.problem(f"earlier attendances not read: {reason(exc)}")

    def next_at(self) -> datetime | None:
        """When the next refresh is due (None: now, nothing written yet)."""
        return None if self._at is None else self._at + SUPERVISED_REFRESH_POLLS * self._poll

    def refresh(self, held: Mapping[JobId, tuple[HostIdentity, frozenset[int]]], now: datetime) -> None:
        """``held``: each sweep's root and the indices of its elements this process holds now."""
        if not supervised_at_due(self._at, now, self._poll):
            return
        self._at = now

        def write() -> None:
            for sweep, (root, indices) in held.items():
                named = indices | self._waiting.get(sweep, frozenset())
                self._pointers.write_attendance(SweepAttendance(sweep, self.holder, root, now, named))
                self._written.add(sweep)
            for sweep in sorted(self._written - set(held)):
                self._pointers.remove_attendance(sweep, self.holder)
                self._written.discard(sweep)

        # a failure: its elements look Unattended from other hosts sooner
        self._said.write(write, lambda problem: f"the sweep's attendance not written: {problem} (said once; "
                         "other login nodes may show its elements Unattended meanwhile)")

    def close(self) -> None:
        """The supervision ended (or was stopped): its attendances are removed, its elements judged from their
        pointers again."""
        for sweep in sorted(self._written):
            try:
                self._pointers.remove_attendance(sweep, self.holder)
            except Exception:  # display only: a stale one is removed by the next supervisor of the sweep
                pass
        self._written.clear()
