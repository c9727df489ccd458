"""Reading a small file of the user's own: never through a link, never blocking, never without bound.

Records, pointers, locks' holder files and control files live in places another user or a crashed
writer may have touched (a shared /var/tmp, an NFS home). Every adapter reads them through
``read_private`` so each gets every check: a planted symlink is not followed (O_NOFOLLOW), a planted
FIFO cannot block the reader (O_NONBLOCK, then a regular-file check on the opened file), a file of
another owner is refused, a file that may carry secrets can be required to be closed to others, and
a file larger than its kind may be is refused rather than read without bound or silently cut short.
"""

from __future__ import annotations

import errno
import os
import stat

_NEXT = 1 << 16  # below malloc's mmap threshold: a read's buffer comes from the heap, not a fresh mapping


class UnsafeFile(OSError):
    """The name holds something ``read_private`` refuses to read; ``reason`` says what, without the path.

    An OSError, so a caller that already treats an unreadable file as unreadable keeps doing so.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def read_private(path: str | os.PathLike[str], limit: int, *, owned: bool = True,
                 closed_to_others: bool = False) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises FileNotFoundError when nothing has the name (callers decide what absence means),
    UnsafeFile for a symlink, a non-regular file, another user's file (unless ``owned`` is False),
    a file group or others may read or write (when ``closed_to_others``), or more than ``limit``
    bytes; other OSErrors as the system gives them.
    """
    return read_private_stat(path, limit, owned=owned, closed_to_others=closed_to_others)[0]


def read_private_stat(
    path: str | os.PathLike[str], limit: int, *, owned: bool = True, closed_to_others: bool = False
) -> tuple[bytes, os.stat_result]:
    """``read_private``, with the status of the very file read (its device and inode name a record)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) or os.path.islink(path):
            raise UnsafeFile(path, "it is a symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(path, "not a regular file")
        if owned and st.st_uid != os.geteuid():
            raise UnsafeFile(path, f"owned by uid {st.st_uid}, not by you")
        if closed_to_others and stat.S_IMODE(st.st_mode) & 0o077:
            raise UnsafeFile(path, f"mode {stat.S_IMODE(st.st_mode):04o} lets others read or change it")
        if st.st_size > limit:
            raise UnsafeFile(path, f"{st.st_size} bytes, more than the {limit} such a file may hold")
        chunks: list[bytes] = []
        size = 0
        # the first read asks for one byte more than fstat saw (a small file: one small buffer, not a
        # chunk's worth allocated per read); the file may grow after fstat: at most one byte past the limit
        want = st.st_size + 1
        while size <= limit:
            chunk = os.read(fd, min(want, limit + 1 - size))
            want = _NEXT
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise UnsafeFile(path, f"more than the {limit} bytes such a file may hold")
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read_named_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """A file the user names (a manifest, a circuit): followed through symbolic links, anyone's, but only a
    regular file of at most ``limit`` bytes, so ``/dev/zero`` or a FIFO is refused instead of read for ever.

    Raises FileNotFoundError, UnsafeFile (``reason``: not a regular file, too large) and other OSErrors."""
    return read_private(os.path.realpath(path), limit, owned=False)
