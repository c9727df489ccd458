"""Tell a sleeping supervisor, as it happens, that a started local object changed.

One thread per watch blocks in ``select`` on what the kernel announces, and on a pipe that ends it; it
costs no CPU while nothing happens:

- inotify (one instance per watch, whatever the number of objects: a user's instances are few, often
  128) on each object's folder (its instance directory is made there by the process owner) and on its
  instance directory: every control file the wrapper publishes (``instance.json`` when the worker
  runs, ``terminated.json`` when it is asked to stop, ``outcome.json`` when it ended) is a name linked
  there, so the supervisor learns of the worker's end the moment its outcome is written, not when the
  process owner has gone too;
- a pidfd on the worker's group leader (Linux 5.3+), readable when the leader exits: after a cancel,
  the worker's processes are gone long before the outcome, which the wrapper writes only once the
  request's grace has run out (seed 001), so the query that follows can say the object is stopped.

Where inotify cannot be had there is no watch (``watch_objects`` gives None), and the supervisor waits
on the process owner's launch lock and its poll, as before.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from dunscaith.adapters.durable import inotify
from dunscaith.adapters.durable.publish import STAGING_PREFIX
from dunscaith.adapters.durable.stop_pipe import close_fds, stop_thread
from dunscaith.adapters.scheduler.local.instance import read_instance
from dunscaith.adapters.scheduler.local.layout import INSTANCE_DIR

_MASK = inotify.IN_CREATE | inotify.IN_MOVED_TO | inotify.IN_ONLYDIR | inotify.IN_DONT_FOLLOW


class ObjectsWatch:
    def __init__(self, folders: Sequence[Path], changed: Callable[[], None]) -> None:
        self._changed = changed
        self._watches: dict[int, Path] = {}  # watch descriptor -> its object's folder (one inotify instance)
        self._pids: dict[int, Path] = {}  # pidfd -> its object's folder
        self._with_pid: set[Path] = set()
        self._instances: set[Path] = set()
        self._fd = self._stop_r = self._stop_w = -1
        try:
            for folder in folders:
                if self._fd < 0:
                    self._fd = inotify.inotify_watch(folder, _MASK)
                    self._watches[1] = folder  # the first watch of a new instance is number 1
                else:
                    self._watches[inotify.add_watch(self._fd, folder, _MASK)] = folder
                self._instance(folder)
            if self._fd < 0:
                raise OSError("no object to watch")
            self._stop_r, self._stop_w = os.pipe2(os.O_CLOEXEC)
        except OSError:
            self._close_fds()
            raise
        self._thread = threading.Thread(target=self._run, name="dunscaith-local-objects-watch", daemon=True)
        self._thread.start()
        changed()  # a change made before the watch began is looked at now

    def _instance(self, folder: Path) -> None:
        """Watch the object's instance directory once it exists, and its worker once it is known."""
        directory = folder / INSTANCE_DIR
        if folder not in self._instances:
            try:
                self._watches[inotify.add_watch(self._fd, directory, _MASK)] = folder
            except OSError:
                return  # not made yet: its creation in the object's folder wakes the thread
            self._instances.add(folder)
        if folder in self._with_pid:
            return
        try:
            records = read_instance(directory).records
        except Exception:  # a damaged directory is the query's to report; this watch only wakes
            return
        if records.instance is None or records.outcome is not None:
            return
        self._with_pid.add(folder)
        with contextlib.suppress(OSError, AttributeError):  # gone already (the outcome wakes), or no pidfd here
            self._pids[os.pidfd_open(records.instance.worker_pid)] = folder

    def _run(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self._fd, *self._pids, self._stop_r], [], [])
            except (OSError, ValueError):
                return  # closed under it
            if self._stop_r in ready:
                return
            woken = False
            for fd in ready:
                if fd in self._pids:
                    self._pids.pop(fd)
                    with contextlib.suppress(OSError):
                        os.close(fd)
                    woken = True
            if self._fd in ready:
                try:
                    found = inotify.events(os.read(self._fd, 65536))
                except BlockingIOError:
                    found = []
                except OSError:
                    return
                for wd, name in found:
                    folder = self._watches.get(wd)
                    if folder is not None and name and not name.startswith(STAGING_PREFIX):
                        self._instance(folder)
                        woken = True
            if woken:
                self._changed()

    def close(self) -> None:
        if stop_thread(self._stop_w, self._thread):
            self._close_fds(soon=True)

    def _close_fds(self, soon: bool = False) -> None:
        """``soon``: the inotify descriptor is closed on a thread of its own (``inotify.close_soon``)."""
        close_fds([*self._pids, self._stop_r, self._stop_w])
        if self._fd >= 0:
            if soon:
                inotify.close_soon(self._fd)
            else:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
        self._watches.clear()
        self._pids.clear()
        self._fd = self._stop_r = self._stop_w = -1


def watch_objects(folders: Sequence[Path], changed: Callable[[], None]) -> ObjectsWatch | None:
    """A watch of these object folders; None where this system gives none."""
    try:
        return ObjectsWatch(folders, changed)
    except OSError:
        return None
