"""Pointers to jobs' records, kept where every login node of the user sees them.

Beside the pointers the store keeps an **index of the pointers not settled**: one small entry per job
whose pointer last said something other than an outcome, so that the Unattended notice, ``status`` and
``list`` read the pointers that can need a hand instead of every pointer ever written (one per job
until it is pruned). The index is display only, like the pointers; ``write`` and ``remove`` keep it in
an order that leaves, after any crash, at worst an entry too many (a *stale* entry, whose pointer is
settled or gone), never a pointer not settled without its entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import IndexEntry, Pointer, PointerReading
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.sweep_attendance import SweepAttendance

__all__ = ["IndexEntry", "PointerReading", "Pointers"]


class Pointers(Protocol):
    def write(self, pointer: Pointer, *, refresh: bool = False) -> None:
        """Write the whole pointer at once (replacing an older one); never half a file. A pointer not
        settled is indexed *before* it is written (an entry naming ``pointer.root_host``); a settled
        one is written *before* its entry is removed. ``refresh``: only supervised-at changed since this
        pointer was last written, so a power loss may keep the older version (still whole): one sync
        fewer, for the rewrite a supervisor makes of every pointer it holds every ten poll intervals."""
        ...

    def write_many(self, pointers: Sequence[Pointer]) -> None:
        """``write`` of each pointer, in order, with the syncs shared: every one whole and durable (its index
        entry before it, when not settled) when this returns, at the cost of a few syncs for the batch rather
        than a few each. A sweep's fresh elements, each pointer durable before the one request that makes
        them all. Every name is checked first (BadPointerName: nothing written); PointerError or OSError
        on the way may leave some of them written, each whole, and their entries with them."""
        ...

    def read(self, job: JobId) -> Pointer:
        """The job's pointer; NoPointer or DamagedPointer (domain.model.jobs.pointer) if there is none to use."""
        ...

    def all(self) -> list[PointerReading]:
        """Every pointer of this user, by job name; damaged ones are listed with their problem."""
        ...

    def remove(self, job: JobId) -> None:
        """Remove the job's pointer if there is one, then its index entry if there is one."""
        ...

    def indexed(self) -> list[JobId] | None:
        """The jobs the index names, by name (stale entries included); None while the index has not
        been built from every pointer (pointers written by a dunscaith that kept no index)."""
        ...

    def index_entry(self, job: JobId) -> IndexEntry | None:
        """The job's index entry (its owner None when the entry does not read); None when it has none."""
        ...

    def index(self, job: JobId, owner: HostIdentity) -> None:
        """Add the job's index entry, naming the host whose pointer it stands for (kept if present)."""
        ...

    def unindex(self, job: JobId) -> None:
        """Remove the job's index entry if there is one (a stale one: the pointer settled or gone)."""
        ...

    def check_writable(self) -> None:
        """PointerError, saying why, when no pointer could be written now (the folder cannot be made, is
        a file, is not yours, refuses writes): ``submit`` asks before it records anything."""
        ...

    def index_built(self) -> None:
        """Say that every pointer has been indexed once: ``indexed`` answers from the index from now on."""
        ...

    def write_attendance(self, attendance: SweepAttendance) -> None:
        """Write one supervisor's attendance of a sweep whole, replacing its older one; as a refresh (a power
        loss may keep the older one, still whole)."""
        ...

    def attendances(self) -> list[SweepAttendance]:
        """Every attendance of this user's sweeps; a damaged one is left out (its elements are then judged
        from their pointers alone, as without it)."""
        ...

    def remove_attendance(self, sweep: JobId, holder: str) -> None:
        """Remove that attendance if it is there."""
        ...
