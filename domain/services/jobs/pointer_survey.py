"""Other hosts' jobs, judged from their pointers, read from the index of pointers not settled.

A user keeps one pointer per job until it is pruned, so a home can hold a hundred thousand of them; the
Unattended notice that rides on every command, ``status`` and ``list`` read only the pointers the
index names (those whose last state is not an outcome: the only ones a judgement from the pointer can
call Unattended), and the pointers of the jobs they show. ``doctor`` reads them all (doctor.py), and so
does ``list --all``. Damaged pointers are never passed over in silence: each reader reports the
damaged ones among those it reads.

Everything here is display only. A stale entry (its pointer since settled) is passed over, and removed
when its pointer names this host, the only host that writes that pointer (seed 000).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from dunscaith.domain.model.jobs.attendance import last_seen, pointer_settled, unattended_by_pointer
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import NoPointer, Pointer, PointerError, PointerReading
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.sweep_attendance import SweepAttendance
from dunscaith.ports.clock import Clock
from dunscaith.ports.pointers import Pointers


@dataclass(frozen=True, slots=True)
class PointedJob:
    """A job whose record is on another host, as its pointer shows it."""

    pointer: Pointer
    unattended: bool  # the judgement from the pointer (it can lag by the refresh period)


@dataclass(frozen=True, slots=True)
class PointedSweep:
    """A sweep whose elements' records are on another host, as their pointers show them (one row)."""

    sweep: JobId
    host: str
    elements: tuple[PointedJob, ...]


def by_sweep(jobs: Iterable[PointedJob]) -> list[PointedJob | PointedSweep]:
    """``jobs`` with the elements of each sweep (and host) made one row, where its first element was."""
    rows: list[PointedJob | list[PointedJob]] = []
    groups: dict[tuple[JobId, str], list[PointedJob]] = {}
    for job in jobs:
        sweep = job.pointer.sweep
        if sweep is None:
            rows.append(job)
            continue
        key = (sweep, job.pointer.host)
        if key not in groups:
            groups[key] = []
            rows.append(groups[key])
        groups[key].append(job)
    return [row if isinstance(row, PointedJob)
            else PointedSweep(row[0].pointer.sweep or JobId(""), row[0].pointer.host, tuple(row)) for row in rows]


@dataclass(frozen=True, slots=True)
class PointerSurvey:
    elsewhere: tuple[PointedJob, ...]  # by job name
    damaged: tuple[tuple[JobId, str], ...]  # the pointers read that do not read, with why
    # whether a pointer read names a job this host recorded (a store of this host should hold it)
    recorded_here: bool = False


class PointerSurveys:
    def __init__(self, pointers: Pointers, clock: Clock, poll: float, here: HostIdentity,
                 shared: str | None = None) -> None:
        """``shared``: the location of the store this command opened when login nodes share it (a
        pointer naming it points here, whichever host wrote it), else None."""
        self._pointers = pointers
        self._clock = clock
        self._poll = timedelta(seconds=poll)
        self._here = here
        self._shared = shared

    def unsettled(self) -> PointerSurvey:
        """Other hosts' jobs whose pointer is not settled, and the indexed pointers that are damaged.
        A home whose index was never built (pointers of a dunscaith that kept none) is read whole once
        and indexed, so the next command reads the index."""
        jobs = self._pointers.indexed()
        readings = self._build() if jobs is None else [r for r in map(self._reading, jobs) if r is not None]
        kept = []
        for reading in readings:
            pointer = reading.pointer
            if pointer is not None and pointer_settled(pointer):
                self._drop_stale(pointer)
                continue
            kept.append(reading)
        return self._survey(kept)

    def everything(self) -> PointerSurvey:
        """Every pointer: other hosts' jobs settled or not, and every damaged pointer (``list --all``)."""
        return self._survey(self._pointers.all())

    def listed(self, shown: Iterable[JobId], every: bool = False) -> PointerSurvey:
        """What ``list`` shows from pointers: other hosts' jobs not settled (``every``: all of them, from
        every pointer), and the damaged pointers among those read and among the ``shown`` jobs' own."""
        read = self.everything() if every else self.unsettled()
        seen = {job for job, _ in read.damaged}
        own = [(job, problem) for job, problem in self.damaged_of(shown) if job not in seen]
        return PointerSurvey(read.elsewhere, (*read.damaged, *own), read.recorded_here)

    def damaged_of(self, jobs: Iterable[JobId]) -> list[tuple[JobId, str]]:
        """The pointers of these jobs that do not read (a missing one is no damage), with why."""
        found = []
        for job in jobs:
            reading = self._reading(job)
            if reading is not None and reading.pointer is None:
                found.append((job, reading.problem or "damaged"))
        return found

    def elsewhere_of(self, job: JobId) -> Pointer | None:
        """The job's pointer if it names another host's record (a job not in this store is there)."""
        reading = self._reading(job)
        pointer = reading.pointer if reading is not None else None
        return pointer if pointer is not None and self._is_elsewhere(pointer) else None

    def moved_of(self, job: JobId, location: str) -> Pointer | None:
        """The job's pointer if it names a record root of this host other than ``location`` (the store this
        command opened): records.root (or records.backend) was changed since the job was recorded, and its
        record is still there, bound to this host."""
        reading = self._reading(job)
        pointer = reading.pointer if reading is not None else None
        if pointer is None or pointer.root_host != self._here or pointer.record_root in (location, self._shared):
            return None
        return pointer

    # --- helpers ----------------------------------------------------------------------------------
    def _reading(self, job: JobId) -> PointerReading | None:
        """The job's pointer as found; None when it has none (an entry whose pointer went: stale)."""
        try:
            return PointerReading(job, self._pointers.read(job))
        except NoPointer:
            return None
        except PointerError as exc:
            return PointerReading(job, None, str(exc))

    def _build(self) -> list[PointerReading]:
        readings = self._pointers.all()
        try:
            for reading in readings:
                if reading.pointer is not None and not pointer_settled(reading.pointer):
                    self._pointers.index(reading.job, reading.pointer.root_host)
            self._pointers.index_built()
        except Exception:  # display only: an index that cannot be written is built next time
            pass
        return readings

    def _drop_stale(self, pointer: Pointer) -> None:
        if pointer.root_host != self._here:
            return  # another host's pointer: that host writes it, and its entry
        try:
            self._pointers.unindex(pointer.job)
        except Exception:  # display only: a stale entry is passed over again next time
            pass

    def _is_elsewhere(self, pointer: Pointer) -> bool:
        return pointer.root_host != self._here and pointer.record_root != self._shared

    def _survey(self, readings: Iterable[PointerReading]) -> PointerSurvey:
        now = self._clock.now()
        elsewhere, damaged, here = [], [], False
        attendances: list[SweepAttendance] | None = None  # read once, if an element of a sweep is met
        for reading in readings:
            pointer = reading.pointer
            if pointer is None:
                damaged.append((reading.job, reading.problem or "damaged"))
            elif self._is_elsewhere(pointer):
                if pointer.sweep is not None and attendances is None:
                    attendances = self._attendances()
                seen = last_seen(pointer, attendances or ())
                if seen is not None and seen != pointer.supervised_at:
                    pointer = pointer.with_supervised(seen)  # what its sweep's supervisor says is newer
                elsewhere.append(PointedJob(pointer, unattended_by_pointer(pointer, now, self._poll)))
            else:
                here = here or pointer.root_host == self._here
        return PointerSurvey(tuple(elsewhere), tuple(damaged), here)

    def _attendances(self) -> list[SweepAttendance]:
        try:
            return self._pointers.attendances()
        except Exception:  # display only: elements are judged from their pointers alone
            return []
