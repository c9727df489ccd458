"""Many jobs' locks taken at once (``JobStore.lock_many``): each handed back held, as a context that gives it
back when left. Where a store has no round trip to save (SQLite's flock files, the memory store), each is
taken in turn by the store's own ``lock``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Generic, TypeVar

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import LockBusy

L = TypeVar("L")


class Held(AbstractContextManager[L], Generic[L]):
    """A lock its context (``taking``, already entered) holds: entering hands it over, leaving gives it back."""

    def __init__(self, taking: AbstractContextManager[L], lock: L) -> None:
        self._taking = taking
        self._lock = lock

    def __enter__(self) -> L:
        return self._lock

    def __exit__(self, *exc: object) -> None:
        self._taking.__exit__(None, None, None)


def each_in_turn(lock: Callable[[JobId], AbstractContextManager[L]], jobs: Iterable[JobId]) -> dict[JobId, Held[L]]:
    """``lock`` of each of ``jobs`` (each once), those another actor holds left out; on any other failure every
    lock taken so far is given back and the failure raised."""
    held: dict[JobId, Held[L]] = {}
    try:
        for job in dict.fromkeys(jobs):
            taking = lock(job)
            try:
                taken = taking.__enter__()
            except LockBusy:
                continue
            held[job] = Held(taking, taken)
    except BaseException:
        for each in held.values():
            each.__exit__(None, None, None)
        raise
    return held
