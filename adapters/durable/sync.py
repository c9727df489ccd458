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


def sync_dir(path: str | os.PathLike[str]) -> None:
    """Make a link, rename or unlink in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        sync_fd(fd)
    finally:
        os.close(fd)
