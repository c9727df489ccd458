"""Directories that hold records, locks and pointers: the user's own, 0700, never a symlink."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class UnsafeDirectory(Exception):
    """A directory that may not hold the user's records (symlink, another owner, not a directory)."""


def ensure_private_dir(path: Path, *, parents: bool = False, tighten: bool = True) -> Path:
    """Create ``path`` (0700) if missing, then check it is a real directory owned by this user.

    In a shared place such as /var/tmp another user could have created the name first, or made it
    a symlink to somewhere of theirs: both are refused rather than used. The check is made on the
    opened directory (O_NOFOLLOW), so the name cannot be swapped between check and use.
    ``tighten=False`` keeps the mode of a directory that already exists (one the user made, such as
    ``~/.config/dunscaith`` holding their config.toml): dunscaith sets modes only on what it creates.
    """
    if parents and not path.parent.exists():
        ensure_private_dir(path.parent, parents=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise UnsafeDirectory(f"{path} is a symbolic link; refusing to keep records through it") from None
        raise UnsafeDirectory(f"{path} is not a directory you can use: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise UnsafeDirectory(f"{path} is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})")
        if tighten and stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
    return path
