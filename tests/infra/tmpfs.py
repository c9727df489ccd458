"""A real small tmpfs for the full-disk tests (issue 22): mounted by the test itself, as root, and filled
on purpose. Skips with a message when this machine cannot mount one (not root, no mount(8))."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


class SmallDisk:
    """A tmpfs of ``size`` at ``path``: ``fill()`` takes every free byte, ``free()`` gives them back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._filler = path / ".filler"

    def fill(self) -> None:
        fd = os.open(self._filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (1 << 16, 4096, 1):  # big pieces, then the last pages a byte at a time
                with contextlib.suppress(OSError):  # ENOSPC: full at this size, which is the point
                    while os.write(fd, b"\0" * size):
                        pass
        finally:
            os.close(fd)
        assert os.statvfs(self.path).f_bavail == 0

    def free(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._filler)

    def read_only(self, on: bool = True) -> None:
        subprocess.run(["mount", "-o", f"remount,{'ro' if on else 'rw'}", str(self.path)], check=True)


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str = "2m") -> Iterator[SmallDisk]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a small tmpfs needs root and mount(8)")
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
