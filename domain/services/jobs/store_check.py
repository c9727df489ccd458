"""The store a job command uses, checked before the command acts: that it opens (a store that cannot be
opened refuses the command, one line), and, before a side effect outside the store, that it would take a
write (prune adds its residual entry first: both, or neither)."""

from __future__ import annotations

from collections.abc import Callable

from dunscaith.ports.job_store import JobStore


class StoreCheck:
    def __init__(self, store: JobStore, integrity: Callable[[JobStore], str | None]) -> None:
        self._store = store  # opened when this use case is made: a store that does not open raises there
        self._integrity = integrity  # the store's own integrity check before a write; None: nothing to say

    def location(self) -> str:
        """Where the store keeps its records (a root's database, a server's database)."""
        return self._store.location()

    def write_refused(self) -> str | None:
        """Why the store would refuse a write now, or None."""
        return self._integrity(self._store)
