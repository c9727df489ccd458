"""Wake the wrapper when a name appears in its instance directory, instead of polling for a request.

A termination request arrives as a new name (``terminate.json`` linked into place, or anything
planted under that name), so the wrapper waits for "a name was added here" and reads the request only
then. Linux: inotify (``IN_CREATE | IN_MOVED_TO``) through libc, as the standard library has no
binding. BSD and macOS: kqueue's ``EVFILT_VNODE``/``NOTE_WRITE`` on the directory (written for, not
run by, this project's tests). Where neither can be had (another system, or the user's inotify
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

FALLBACK_POLL_SECONDS = 1.0

_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000


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
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)  # IN_NONBLOCK and IN_CLOEXEC are these flags
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    mask = _IN_CREATE | _IN_MOVED_TO | _IN_ONLYDIR | _IN_DONT_FOLLOW
    if libc.inotify_add_watch(fd, os.fsencode(directory), ctypes.c_uint32(mask)) < 0:
        err = ctypes.get_errno()
        os.close(fd)
        raise OSError(err, os.strerror(err))
    return _Inotify(fd)


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
