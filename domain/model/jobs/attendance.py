"""Whether anyone watches a job, judged from its pointer when its record is on another host.

On the owning host Unattended is exact (read from the locks: the job's own and, for a sweep's element, its
sweep's, which the sweep's supervisor holds for as long as it lives, so the elements it has not started
yet, waiting for a slot of --max-running, are its own and not Unattended). Elsewhere it is a judgement from the
pointer's supervised-at, which a supervisor refreshes at most once every ten poll intervals, so it can
lag by that period: the judgement allows twice that before calling a job Unattended. A sweep's supervisor
refreshes one attendance for the elements it holds instead of each element's pointer
(sweep_attendance.py): an element is judged from the newer of the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Protocol, TypeVar

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import SUPERVISED_REFRESH_POLLS, Pointer
from dunscaith.domain.model.jobs.record import LoopHealth
from dunscaith.domain.model.jobs.state import OutcomeKind
from dunscaith.domain.model.jobs.sweep_attendance import SweepAttendance

FINAL_WORDS: frozenset[str] = frozenset(str(kind) for kind in OutcomeKind)


class _Named(Protocol):
    """A job not settled as a store lists it: a summary, or the notice's narrower ``UnattendedJob``."""

    @property
    def job(self) -> JobId: ...

    @property
    def sweep(self) -> JobId | None: ...


N = TypeVar("N", bound=_Named)


def pointer_settled(pointer: Pointer) -> bool:
    """Whether the pointer's last state is an outcome: then no judgement from it can call the job
    Unattended, and it leaves the index of pointers not settled (the one list the notice reads)."""
    return pointer.state in FINAL_WORDS


def unattended_here(settled: bool, health: LoopHealth, sweep_held: bool = False) -> bool:
    """On the owning host: something is left to do (if only committing the settlement) and nobody holds
    the job's lock, nor (``sweep_held``) the lock of the sweep it is an element of: a live sweep supervisor
    holds an element it has not started yet (waiting for a slot of --max-running) by its sweep's lock."""
    return not settled and not health.held and not sweep_held


def unattended_among(unsettled: Iterable[N], held: Callable[[JobId], bool]) -> list[N]:
    """The Unattended ones of jobs not settled, ``held`` telling whether a name's lock is held now: a
    sweep's asked once (and first: the elements of a live sweep supervisor's sweep cost no probe each)."""
    sweeps: dict[JobId, bool] = {}
    found: list[N] = []
    for summary in unsettled:
        sweep = summary.sweep
        if sweep is not None:
            if sweep not in sweeps:
                sweeps[sweep] = held(sweep)
            if sweeps[sweep]:
                continue
        if not held(summary.job):
            found.append(summary)
    return found


def loop_stale(health: LoopHealth, now: datetime, poll: float) -> bool:
    """Display only: the lock's holder is more than two poll intervals late for its next loop.

    The next loop is the one the holder announced (a supervisor that sleeps to its job's next poll,
    160 s away for a job that has settled in, is not late before then), or one poll interval after the
    last where it announced none: then it is stale once its last loop is three poll intervals old."""
    if not health.held:
        return False
    if health.last_loop is None:
        return True
    due = health.last_loop + timedelta(seconds=poll)
    if health.next_loop is not None and health.next_loop > due:
        due = health.next_loop
    return now - due > timedelta(seconds=2 * poll)


def last_seen(pointer: Pointer, attendances: Sequence[SweepAttendance] = ()) -> datetime | None:
    """When a supervisor last said it held the job: its pointer's supervised-at, or the newer attendance
    of a sweep supervisor that names it."""
    seen = pointer.supervised_at
    if pointer.sweep is None:
        return seen
    for attendance in attendances:
        if (seen is None or attendance.supervised_at > seen) and attendance.covers(pointer):
            seen = attendance.supervised_at
    return seen


def unattended_by_pointer(pointer: Pointer, now: datetime, poll: timedelta,
                          attendances: Sequence[SweepAttendance] = ()) -> bool:
    if pointer_settled(pointer):
        return False
    seen = last_seen(pointer, attendances)
    return seen is None or now - seen > 2 * SUPERVISED_REFRESH_POLLS * poll


def attendance_stale(attendance: SweepAttendance, now: datetime, poll: timedelta) -> bool:
    """An attendance no live supervisor keeps (it would have refreshed it): its file may be removed."""
    return now - attendance.supervised_at > 2 * SUPERVISED_REFRESH_POLLS * poll
