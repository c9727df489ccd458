"""Pointers to jobs' records, kept where every login node of the user sees them."""

from __future__ import annotations

from typing import Protocol

from domain.model.jobs.ids import JobId
from domain.model.jobs.pointer import Pointer, PointerReading

__all__ = ["PointerReading", "Pointers"]


class Pointers(Protocol):
    def write(self, pointer: Pointer) -> None:
        """Write the whole pointer at once (replacing an older one); never half a file."""
        ...

    def read(self, job: JobId) -> Pointer:
        """The job's pointer; NoPointer or DamagedPointer (domain.model.jobs.pointer) if there is none to use."""
        ...

    def all(self) -> list[PointerReading]:
        """Every pointer of this user, by job name; damaged ones are listed with their problem."""
        ...

    def remove(self, job: JobId) -> None:
        """Remove the job's pointer if there is one."""
        ...
