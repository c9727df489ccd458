"""Whether a store may be made where none is: never where this host's pointers name jobs recorded there.

A pointer is display only, but it is also the one trace left when a store file is deleted or moved
aside: making a new, empty store in its place would answer "no job named … is recorded" for every job
the user still has, and hide that their records are gone. So a store is made only where no pointer of
this host names the root (seed 000's pointer: the owning host, the record root and its HOST identity).
"""

from __future__ import annotations

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.ports.pointers import Pointers


class StoreCreation:
    def __init__(self, pointers: Pointers, here: HostIdentity) -> None:
        self._pointers = pointers
        self._here = here

    def named_by_pointers(self, location: str) -> list[JobId]:
        """The jobs this host's pointers say are recorded at ``location`` (a record root), by name; empty
        when none does or the pointers cannot be read (they are display only: a home that does not read
        never stops a first use)."""
        try:
            readings = self._pointers.all()
        except Exception:
            return []
        return [r.job for r in readings
                if r.pointer is not None and r.pointer.root_host == self._here and r.pointer.record_root == location]
