"""The worker's stdout to ours, unchanged, every byte counted and digested (BLAKE3; the wrapper's pump).

Every byte is copied once into a buffer of a ``DigestRing``, whose own thread hashes it on the
other core while the pump forwards the same bytes; how they are forwarded depends on our stdout:

- **a pipe** (Linux): ``tee(2)`` duplicates what the worker wrote into a pipe of ours by reference,
  the pump reads that duplicate into the buffer for the hash (the one copy), and ``splice(2)`` moves
  the worker's pages on to our stdout without a copy. Both pipes are grown to 1 MiB (``grow_pipe``).
- **anything else** (a file such as the local scheduler's ``O_APPEND`` stdout, ``/dev/null``, a
  terminal, a socket; and every stdout on macOS): the pump reads into the buffer and writes it, in
  pieces of at most ``WRITE`` bytes (128 KiB). Linux refuses ``splice`` into an ``O_APPEND`` file, and
  onto ``/dev/null`` a write costs nothing, so tee would only add system calls there.

Why these sizes (measured on this 2-core VM, 1 GiB): 1 MiB reads keep the hand-overs few. Writes
into a file are cut to 128 KiB, as ``cat`` writes: ext4 sizes its page-cache folios by the write, and
512 KiB or 1 MiB writes took 0.23-0.9 s of CPU per GiB (median 0.61 s) against a steady 0.22-0.27 s
for 128 KiB and 256 KiB ones (likely the high-order pages such folios need being ones the VM's host
took back, so the first write into them faults on the host); 1 GiB through the wrapper onto a file
took 1.5-2.4 s of CPU with 512 KiB writes, 1.2-1.3 s with 128 KiB ones.

When the reader of our stdout goes away (EPIPE, or any other write error) forwarding stops and the
pump keeps draining, counting and hashing, so the count covers everything the worker wrote. A full disk
under a file stdout (ENOSPC, EDQUOT) is no reader going away: given ``full``, the pump tells it, waits
on a backoff and writes the same bytes again, so the file loses nothing (the worker is held by its pipe
meanwhile, as a direct writer would be by the disk).
"""

from __future__ import annotations

import errno
import os
import select
import time
from collections.abc import Callable

from dunscaith.adapters.process.pipe_tee import (
    F_SETPIPE_SZ,
    GONE,
    MOVED,
    REFUSED,
    Tee,
    grow_pipe,
    splice_exactly,
    tee_for,
)
from dunscaith.domain.model.stdout_digest import EMPTY

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (~3.5 ms) on every local job's start
if TYPE_CHECKING:
    from dunscaith.adapters.process.digest_ring import DigestRing

__all__ = ["CHUNK", "F_SETPIPE_SZ", "WRITE", "Pumped", "pump"]

CHUNK = 1 << 20  # a read's most, a ring buffer's size, and what the pipes are grown to
WRITE = 1 << 17
FULL_FIRST, FULL_MAX = 0.25, 5.0  # the backoff of a write into a full disk
_FULL = (errno.ENOSPC, errno.EDQUOT)

# told the error when writing to our stdout waits for space, and None once it went on
Full = Callable[[OSError | None], None]


class Pumped:
    """What ``pump`` moved: the count, the digest (``blake3:<hex>``) and whether the reader went away (a plain class:
    no ``dataclasses`` on the path of every job's start)."""

    __slots__ = ("count", "digest", "reader_gone")

    def __init__(self, count: int, digest: str, reader_gone: bool) -> None:
        self.count = count
        self.digest = digest
        self.reader_gone = reader_gone

    def __repr__(self) -> str:
        return f"Pumped(count={self.count}, digest={self.digest!r}, reader_gone={self.reader_gone})"


def pump(source: int, out: int = 1, full: Full | None = None) -> Pumped:
    """Forward ``source`` to ``out`` until its end; the count, the digest and whether the reader went away.
    ``full``: see the module's docstring (without it, a full disk ends forwarding as a reader gone).

    A source that ends without a byte (most short jobs) is told without the ring: no buffers, no digest
    thread, and no import of blake3 (1.5-6 ms of a short job's wrapper)."""
    if _ended_empty(source):
        return Pumped(0, EMPTY, False)
    from dunscaith.adapters.process.digest_ring import DigestRing

    ring = DigestRing(CHUNK)
    try:
        tee = tee_for(source, out)
        count, how = _by_tee(source, out, tee, ring, full) if tee is not None else (0, REFUSED)
        forwarding = how != GONE
        if how != MOVED:  # not spliced (any more): the rest is copied, or drained once the reader is gone
            copied, forwarding = _by_copy(source, out, ring, forwarding, full)
            count += copied
    finally:
        digest = ring.digest()
    return Pumped(count, digest, not forwarding)


def _ended_empty(source: int) -> bool:
    """Wait, as the first read would, for ``source``'s first byte or its end; True when it ended with none.

    A pipe whose writers are gone and that holds nothing polls as a hang-up without POLLIN (Linux; where
    an ending is also told as POLLIN, or for a file, the pump reads on and finds the end itself)."""
    if not hasattr(select, "poll"):
        return False
    poller = select.poll()
    poller.register(source, select.POLLIN)
    events = poller.poll()
    return bool(events) and all(mask & select.POLLHUP and not mask & select.POLLIN for _, mask in events)


def _by_tee(source: int, out: int, tee: Tee, ring: DigestRing, full: Full | None) -> tuple[int, str]:
    """Tee, hash the duplicate, splice the original: the count, and MOVED at the end or how splicing stopped."""
    hash_r, hash_w = os.pipe()
    try:
        for fd in (source, hash_w, out):
            grow_pipe(fd, CHUNK)
        count = 0
        while n := tee(source, hash_w, CHUNK):
            count += n
            view = ring.take()
            _read_exactly(hash_r, view[:n])
            ring.hash(n)  # hashed while the same bytes are spliced on
            how, left = splice_exactly(source, out, n)
            if how != MOVED:  # the rest of this chunk is hashed already: forward (or drop) it without a hash
                if not _copy_unhashed(source, out, left, how == REFUSED, full):
                    how = GONE
                return count, how
        return count, MOVED
    finally:
        os.close(hash_w)
        os.close(hash_r)


def _by_copy(source: int, out: int, ring: DigestRing, forwarding: bool, full: Full | None) -> tuple[int, bool]:
    """Read into the ring, hash, write (while ``forwarding``) until the source's end: the count, still forwarding."""
    count = 0
    while True:
        view = ring.take()
        n = os.readv(source, [view])
        if not n:
            return count, forwarding
        count += n
        ring.hash(n)  # hashed while the same bytes are written
        if forwarding:
            forwarding = _write_all(out, view[:n], full)


def _read_exactly(fd: int, view: memoryview) -> None:
    while view:
        view = view[os.readv(fd, [view]):]


def _copy_unhashed(source: int, out: int, n: int, forwarding: bool, full: Full | None) -> bool:
    """The next ``n`` bytes of ``source`` to ``out`` (dropped unless ``forwarding``); False once the reader is gone."""
    view = memoryview(bytearray(min(n, CHUNK)))  # rare (once per run at most): no ring buffer for it
    while n:
        got = os.readv(source, [view[:n]])
        n -= got
        if forwarding:
            forwarding = _write_all(out, view[:got], full)
    return forwarding


def _write_all(out: int, view: memoryview, full: Full | None = None) -> bool:
    """Write ``view`` whole to ``out``; False once the reader has gone away (EPIPE or another write error).
    With ``full``, a full disk is waited out (told, backed off, written again), never taken for that."""
    wait, waited = FULL_FIRST, False
    while view:
        try:
            view = view[os.write(out, view[:WRITE]):]
        except BlockingIOError:  # fd 1 shared with a non-blocking owner: wait, this is no going away
            select.select([], [out], [])
        except OSError as exc:
            if full is None or exc.errno not in _FULL:
                return False
            if not waited:
                full(exc)
                waited = True
            time.sleep(wait)
            wait = min(wait * 2, FULL_MAX)
    if waited:
        full(None)  # type: ignore[misc]  # waited implies full
    return True
