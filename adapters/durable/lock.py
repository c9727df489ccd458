"""Kernel-held exclusive locks: a dead holder releases its lock, a reused pid cannot fake one."""

from __future__ import annotations

import errno
import fcntl
import os


class LockHeld(Exception):
    """Another open file description holds the lock."""


class FlockLock:
    """An exclusive ``flock`` on a file the caller owns, opened without following symlinks.

    The lock lives as long as the file descriptor, so it survives ``exec`` only if the caller
    makes the descriptor inheritable, and ends with the process whatever the way it ends.
    """

    def __init__(self, path: str | os.PathLike[str], mode: int = 0o600) -> None:
        self.path = path
        self._mode = mode
        self._fd: int | None = None

    @property
    def fd(self) -> int:
        if self._fd is None:
            raise RuntimeError("lock not held")
        return self._fd

    def acquire(self, *, blocking: bool = False) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, self._mode)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise LockHeld(str(self.path)) from None
            raise
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the only descriptor drops the flock

    def __enter__(self) -> FlockLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def is_held(path: str | os.PathLike[str]) -> bool:
    """True when some process holds an exclusive flock on ``path``.

    Probes with a *shared* non-blocking lock, dropped at once. A holder must therefore take its
    exclusive lock blocking (``acquire(blocking=True)``) or retry, since a probe may hold the shared
    lock for an instant. A missing file is not held.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return True
        raise
    finally:
        os.close(fd)
    return False
