"""Pointers to jobs' records, kept where every login node of the user sees them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from domain.model.jobs.ids import JobId
from domain.model.jobs.pointer import Pointer


@dataclass(frozen=True, slots=True)
class PointerReading:
    """One job's pointer as found: the pointer, or why it could not be read (a damaged one is reported)."""

    job: JobId
    pointer: Pointer | None
    problem: str | None = None


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
