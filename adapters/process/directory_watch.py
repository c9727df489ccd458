"""Wake the wrapper when a name appears in its instance directory, instead of polling for a request.

A termination request arrives as a new name (``terminate.json`` linked into place, or anything
planted under that name), so the wrapper waits for "a name was added here" and reads the request only
then. Linux: inotify (``IN_CREATE | IN_MOVED_TO``, adapters/durable/inotify.py). BSD and macOS:
kqueue's ``EVFILT_VNODE``/``NOTE_WRITE`` on the directory (written for, not run by, this project's
tests). Where neither can be had (another system, or the user's inotify
instances are used up: ``fs.inotify.max_user_instances`` is often 128), the wrapper polls every
``FALLBACK_POLL_SECONDS``, so a request is still answered, only later.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from pathlib import Path
from typing import Protocol

from dunscaith.adapters.durable.inotify import IN_CREATE, IN_DONT_FOLLOW, IN_MOVED_TO, IN_ONLYDIR, inotify_watch

FALLBACK_POLL_SECONDS = 1.0


class DirectoryWatch(Protocol):
    """Something ``select`` can wait on that becomes readable when a name is added to the directory."""

    def fileno(self) -> int | None:
        """The descriptor to wait on; None when there is none and the caller must poll."""

    @property
    def poll_seconds(self) -> float | None:
        """How long a wait may last before the directory is looked at anyway; None: as long as need be."""

    def drain(self) -> None:
        """Forget the notifications read so far (called before the directory is looked at)."""

    def close(self) -> None: ...


class _Inotify:
    poll_seconds = None

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int | None:
        return self._fd

    def drain(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._fd, 65536):
                pass

    def close(self) -> None:
        os.close(self._fd)


if sys.platform != "linux":  # pragma: no cover - BSD and macOS only (typeshed has kqueue off Linux only)

    class _Kqueue:
        poll_seconds = None

        def __init__(self, directory: Path) -> None:
            flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_EVTONLY", 0) | os.O_CLOEXEC
            self._dir_fd = os.open(directory, flags)
            try:
                self._queue = select.kqueue()
                event = select.kevent(self._dir_fd, filter=select.KQ_FILTER_VNODE,
                                      flags=select.KQ_EV_ADD | select.KQ_EV_CLEAR, fflags=select.KQ_NOTE_WRITE)
                self._queue.control([event], 0, 0)
            except OSError:
                os.close(self._dir_fd)
                raise

        def fileno(self) -> int | None:
            return self._queue.fileno()

        def drain(self) -> None:
            while self._queue.control(None, 16, 0):
                pass

        def close(self) -> None:
            self._queue.close()
            os.close(self._dir_fd)


class Polling:
    """No notification at all: the caller looks every ``FALLBACK_POLL_SECONDS``."""

    poll_seconds = FALLBACK_POLL_SECONDS

    def fileno(self) -> int | None:
        return None

    def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


def _inotify(directory: Path) -> _Inotify:
    return _Inotify(inotify_watch(directory, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW))


def watch_directory(directory: Path) -> DirectoryWatch:
    """The best watch this system gives on ``directory``; ``Polling`` when it gives none."""
    try:
        if sys.platform == "linux":
            return _inotify(directory)
        if sys.platform != "linux" and hasattr(select, "kqueue"):  # pragma: no cover - BSD and macOS only
            return _Kqueue(directory)
    except (OSError, AttributeError):  # no inotify in this libc, instances used up, ...
        pass
    return Polling()


def polling(directory: Path) -> DirectoryWatch:
    """A watch factory that never notifies: what the wrapper falls back to, chosen on purpose."""
    return Polling()
