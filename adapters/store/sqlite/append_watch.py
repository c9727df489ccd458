"""Tell a sleeping supervisor that its record was appended to, from the store's own files.

Every commit writes the database's write-ahead log, so a watch on the record root for changes to the
database's files (``records.db``, ``-wal``) sees every append by any writer: a command's request, a
forwarded command, another job's supervisor. It cannot tell one job's rows from another's, so it
wakes for any of them, and the woken loop reads its record only if the database changed
(``PRAGMA data_version``). Lock beats live in ``locks/``, out of this watch's sight.

The log is written before its commit is visible (its frames, then their fsync, then the shared index
a reader looks at), so a wake at the first write could find nothing new and sleep on past the commit.
So before waking, the thread takes the writers' turn (the flock every writer holds from before
BEGIN IMMEDIATE to after COMMIT, ``write.lock``) for a moment: once it has it, every transaction whose
writes it saw has committed or rolled back.

A thread blocks on the inotify descriptor and a pipe that ends it: no polling, no CPU while nothing
is written. After each wake it pauses (``_SETTLE``) before it looks again, so a burst of commits (a
sweep's hundreds of elements released, started or ended, each a commit that wakes every element's loop)
is told in one wake per pause, not one per commit: the wakes of N elements' N commits would be N².
The pause is 20 ms, or four times what the last wake took, whichever is longer: the thread spends at most
a fifth of its time waking. A commit during the pause is still seen (inotify keeps its events), at the
pause's end. Where inotify cannot be had, there is no watch and the supervisor reads its record every
poll interval.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path

from dunscaith.adapters.durable import inotify
from dunscaith.adapters.durable.stop_pipe import close_fds, stop_thread
from dunscaith.adapters.store.subscription import Subscription

_SETTLE = 0.02  # seconds, at least, between two wakes: see "After each wake" above
_SETTLE_SHARE = 4  # ... or this many times as long as the last wake took


class DatabaseAppendWatch:
    def __init__(self, root: Path, db_name: str, turn: Path, wake: Callable[[], None]) -> None:
        self._db_name = db_name
        self._wake = wake
        self._turn_fd = os.open(turn, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            self._fd = inotify.inotify_watch(root, inotify.IN_MODIFY | inotify.IN_CREATE | inotify.IN_MOVED_TO
                                             | inotify.IN_ONLYDIR | inotify.IN_DONT_FOLLOW)
        except OSError:
            os.close(self._turn_fd)
            raise
        try:
            self._stop_r, self._stop_w = os.pipe2(os.O_CLOEXEC)
        except OSError:
            os.close(self._fd)
            os.close(self._turn_fd)
            raise
        self._live = True
        self._thread = threading.Thread(target=self._run, name="dunscaith-append-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self._fd, self._stop_r], [], [])
                if self._stop_r in ready:
                    return
                with contextlib.suppress(BlockingIOError):
                    if any(name.startswith(self._db_name) for name in inotify.event_names(os.read(self._fd, 65536))):
                        fcntl.flock(self._turn_fd, fcntl.LOCK_SH)  # the writer seen is done: its commit shows
                        fcntl.flock(self._turn_fd, fcntl.LOCK_UN)
                        began = time.monotonic()
                        self._wake()
                        settle = max(_SETTLE, _SETTLE_SHARE * (time.monotonic() - began))
                        if self._stop_r in select.select([self._stop_r], [], [], settle)[0]:
                            return
            except OSError:  # the descriptor failed: say so once, and let the loop read every poll after
                self._live = False
                self._wake()
                return

    def live(self) -> bool:
        return self._live

    def close(self) -> None:
        if not stop_thread(self._stop_w, self._thread):
            return
        close_fds((self._stop_r, self._stop_w, self._turn_fd))
        inotify.close_soon(self._fd)  # the kernel's grace period is waited on another thread
        self._stop_w = -1


def watch_database(root: Path, db_name: str, turn: Path, wake: Callable[[], None]) -> DatabaseAppendWatch | None:
    """A watch of the database's files in ``root``, its writers' turn in ``turn``; None where this system
    gives none."""
    try:
        return DatabaseAppendWatch(root, db_name, turn, wake)
    except OSError:
        return None


class SharedAppendWatches:
    """One watch of the database for every job this process watches (a sweep's hundreds of elements, or one
    job): a thread and four descriptors in all, not that many per job. It wakes every subscriber on each
    commit it sees, which is what one watch per job did too (none can tell one job's rows from another's)."""

    def __init__(self, make: Callable[[Callable[[], None]], DatabaseAppendWatch | None]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._watch: DatabaseAppendWatch | None = None
        self._wakes: dict[int, Callable[[], None]] = {}
        self._next = 0

    def subscribe(self, wake: Callable[[], None]) -> Subscription | None:
        """``wake`` called on every commit seen until the subscription is closed; None where this system
        gives no watch."""
        dead: DatabaseAppendWatch | None = None
        with self._lock:
            if self._watch is not None and not self._watch.live():
                dead, self._watch = self._watch, None  # its descriptor failed: a new one for the new subscriber
            if self._watch is None:
                self._watch = self._make(self._wake_all)
            watch = self._watch
            if watch is not None:
                key, self._next = self._next, self._next + 1
                self._wakes[key] = wake
        if dead is not None:
            dead.close()
        return None if watch is None else Subscription(lambda: self._unsubscribe(key), watch.live)

    def _wake_all(self) -> None:
        for wake in list(self._wakes.values()):
            wake()

    def _unsubscribe(self, key: int) -> None:
        last: DatabaseAppendWatch | None = None
        with self._lock:
            self._wakes.pop(key, None)
            if not self._wakes:
                last, self._watch = self._watch, None
        if last is not None:
            last.close()
