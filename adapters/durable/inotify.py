"""inotify through libc, as the standard library has no binding: waits that wake instead of polling.

Linux only; elsewhere (and where the user's inotify instances are used up: ``fs.inotify.max_user_instances``
is often 128) ``inotify_watch`` raises OSError and the caller falls back to looking now and then.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
from pathlib import Path

IN_MODIFY = 0x00000002
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000

_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then len bytes of name


def inotify_watch(path: Path, mask: int) -> int:
    """A non-blocking, close-on-exec inotify descriptor with one watch on ``path``; OSError if none."""
    if sys.platform != "linux":
        raise OSError(f"no inotify on {sys.platform}")
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)  # IN_NONBLOCK and IN_CLOEXEC are these flags
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    if libc.inotify_add_watch(fd, os.fsencode(path), ctypes.c_uint32(mask)) < 0:
        err = ctypes.get_errno()
        os.close(fd)
        raise OSError(err, os.strerror(err))
    return int(fd)


def close_soon(fd: int) -> None:
    """Close the inotify descriptor ``fd`` on a thread of its own, and return at once.

    When an instance's last reference goes, the kernel waits out a grace period of its mark list (SRCU,
    ~10 ms here) before ``close`` returns: that is a supervisor's end waiting on nothing it needs (two such
    closes were ~20 ms of a ``submit -- true``). A thread takes the wait; two of them wait together, and
    beside what the process does next. The descriptor's number stays taken until that ``close``, so it
    cannot be confused with one opened meanwhile; a process ending before it waits for it (the kernel
    ends a thread in a system call when the call returns)."""
    import threading

    def close() -> None:
        with contextlib.suppress(OSError):
            os.close(fd)

    try:
        threading.Thread(target=close, name="dunscaith-inotify-close", daemon=True).start()
    except RuntimeError:  # no thread to be had (the interpreter is shutting down): wait here
        close()


def event_names(buffer: bytes) -> list[str]:
    """The names in a buffer of events read from an inotify descriptor (empty for the watched file itself)."""
    names, at = [], 0
    while at + _EVENT.size <= len(buffer):
        _wd, _mask, _cookie, length = _EVENT.unpack_from(buffer, at)
        raw = buffer[at + _EVENT.size:at + _EVENT.size + length]
        names.append(os.fsdecode(raw.rstrip(b"\0")))
        at += _EVENT.size + length
    return names


def add_watch(fd: int, path: Path, mask: int) -> int:
    """One more watch on ``path`` in the inotify descriptor ``fd`` (from ``inotify_watch``); its watch
    descriptor, which ``events`` names. OSError if none (FileNotFoundError for a path not there)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    wd = int(libc.inotify_add_watch(fd, os.fsencode(path), ctypes.c_uint32(mask)))
    if wd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(path))
    return wd


def events(buffer: bytes) -> list[tuple[int, str]]:
    """(watch descriptor, name) of each event in a buffer read from an inotify descriptor."""
    found, at = [], 0
    while at + _EVENT.size <= len(buffer):
        wd, _mask, _cookie, length = _EVENT.unpack_from(buffer, at)
        raw = buffer[at + _EVENT.size:at + _EVENT.size + length]
        found.append((int(wd), os.fsdecode(raw.rstrip(b"\0"))))
        at += _EVENT.size + length
    return found
