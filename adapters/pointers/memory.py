"""Pointers kept in memory, for tests of the use cases that write and read them."""

from __future__ import annotations

from collections.abc import Sequence

from dunscaith.domain.model.jobs.attendance import pointer_settled
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import IndexEntry, NoPointer, Pointer, pointer_file_name
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.sweep_attendance import SweepAttendance, attendance_file_name
from dunscaith.ports.pointers import PointerReading


class InMemoryPointers:
    def __init__(self, *, built: bool = False) -> None:
        self.pointers: dict[JobId, Pointer] = {}
        self.writes: list[Pointer] = []  # every write in order, so tests can count them (NFS writes are rare)
        self.batches: list[list[Pointer]] = []  # every write_many's pointers (each also in ``writes``)
        self.entries: dict[JobId, HostIdentity | None] = {}  # the index of pointers not settled
        self.built = built  # False until index_built(), as a fresh home (or one an older dunscaith wrote)
        self.attending: dict[str, SweepAttendance] = {}  # by file name
        self.attendance_writes: list[SweepAttendance] = []

    def write(self, pointer: Pointer, *, refresh: bool = False) -> None:
        pointer_file_name(pointer.job)
        if not pointer_settled(pointer):
            self.entries.setdefault(pointer.job, pointer.root_host)
        self.pointers[pointer.job] = pointer
        self.writes.append(pointer)
        if pointer_settled(pointer):
            self.entries.pop(pointer.job, None)

    def write_many(self, pointers: Sequence[Pointer]) -> None:
        for pointer in pointers:
            pointer_file_name(pointer.job)  # every name checked before any is written, as the files'
        self.batches.append(list(pointers))
        for pointer in pointers:
            self.write(pointer)

    def read(self, job: JobId) -> Pointer:
        try:
            return self.pointers[job]
        except KeyError:
            raise NoPointer(job) from None

    def all(self) -> list[PointerReading]:
        return [PointerReading(job, self.pointers[job]) for job in sorted(self.pointers)]

    def remove(self, job: JobId) -> None:
        self.pointers.pop(job, None)
        self.entries.pop(job, None)

    def indexed(self) -> list[JobId] | None:
        return sorted(self.entries) if self.built else None

    def index_entry(self, job: JobId) -> IndexEntry | None:
        return IndexEntry(job, self.entries[job]) if job in self.entries else None

    def index(self, job: JobId, owner: HostIdentity) -> None:
        pointer_file_name(job)
        self.entries.setdefault(job, owner)

    def unindex(self, job: JobId) -> None:
        self.entries.pop(job, None)

    def check_writable(self) -> None:
        return None

    def index_built(self) -> None:
        self.built = True

    def write_attendance(self, attendance: SweepAttendance) -> None:
        self.attending[attendance_file_name(attendance.sweep, attendance.holder)] = attendance
        self.attendance_writes.append(attendance)

    def attendances(self) -> list[SweepAttendance]:
        return [self.attending[name] for name in sorted(self.attending)]

    def remove_attendance(self, sweep: JobId, holder: str) -> None:
        self.attending.pop(attendance_file_name(sweep, holder), None)
