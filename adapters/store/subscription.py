"""One job's share of a process's shared watch of appends (an ``AppendWatch``): SQLite's file watch and
PostgreSQL's listening connection are each shared by every job the process holds, and a subscriber's
``close`` takes its wake out of the shared one."""

from __future__ import annotations

from collections.abc import Callable


class Subscription:
    def __init__(self, unsubscribe: Callable[[], None], watch_live: Callable[[], bool]) -> None:
        self._unsubscribe = unsubscribe
        self._watch_live = watch_live
        self._closed = False

    def live(self) -> bool:
        return not self._closed and self._watch_live()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._unsubscribe()
