"""Flush a file or a directory to stable storage."""

from __future__ import annotations

import os
import sys

if sys.platform == "darwin":  # pragma: no cover - exercised on macOS only
    import fcntl

    def sync_fd(fd: int) -> None:
        # fsync on macOS only reaches the drive's cache; F_FULLFSYNC asks the drive to flush it.
        try:
            fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
        except OSError:
            os.fsync(fd)

else:

    def sync_fd(fd: int) -> None:
        os.fsync(fd)


def sync_files(directory: str | os.PathLike[str], paths: list[str]) -> None:
    """Make the bytes of every file of ``paths`` (all on the filesystem of ``directory``) durable at once.

    On Linux one ``syncfs`` of that filesystem: one flush for them all, where an ``fsync`` each is one
    journal commit each (500 small files: ~0.1-0.3 s against ~0.7-1.3 s on this project's test machines).
    Elsewhere, or when ``syncfs`` cannot be called, each file's own sync, as before."""
    if _syncfs(directory):
        return
    for path in paths:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            sync_fd(fd)
        finally:
            os.close(fd)


def _syncfs(directory: str | os.PathLike[str]) -> bool:
    """True when the filesystem of ``directory`` was synced whole (its writeback errors raised as OSError)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here: only a batch of files pays for it (a few ms), never a routed command

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syncfs = libc.syncfs
    except (OSError, AttributeError):
        return False
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if syncfs(fd) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, os.strerror(errno), os.fspath(directory))
    finally:
        os.close(fd)
    return True


def sync_dir(path: str | os.PathLike[str]) -> None:
    """Make a link, rename or unlink in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        sync_fd(fd)
    finally:
        os.close(fd)
