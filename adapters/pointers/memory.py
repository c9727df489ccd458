"""Pointers kept in memory, for tests of the use cases that write and read them."""

from __future__ import annotations

from domain.model.jobs.ids import JobId
from domain.model.jobs.pointer import NoPointer, Pointer, pointer_file_name
from ports.pointers import PointerReading


class InMemoryPointers:
    def __init__(self) -> None:
        self.pointers: dict[JobId, Pointer] = {}
        self.writes: list[Pointer] = []  # every write in order, so tests can count them (NFS writes are rare)

    def write(self, pointer: Pointer) -> None:
        pointer_file_name(pointer.job)
        self.pointers[pointer.job] = pointer
        self.writes.append(pointer)

    def read(self, job: JobId) -> Pointer:
        try:
            return self.pointers[job]
        except KeyError:
            raise NoPointer(job) from None

    def all(self) -> list[PointerReading]:
        return [PointerReading(job, self.pointers[job]) for job in sorted(self.pointers)]

    def remove(self, job: JobId) -> None:
        self.pointers.pop(job, None)
