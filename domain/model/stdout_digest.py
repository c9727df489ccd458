"""The digest of a stdout, as every record and frame writes it: ``blake3:<64 hex digits>``.

Why BLAKE3 and not SHA-256: the wrapper digests every byte it forwards, in one sequential stream, so
the digest bounds its throughput. SHA-256 runs at about 1.1 GB/s on one core of this project's
machine (SHA-NI included), slower than ``cat`` moves bytes through a pipe; BLAKE3 (the ``blake3``
package, its SIMD code) runs at about 4 GB/s on the same core (docs/remote.md, "Throughput").

The algorithm's name travels with the value. Records and outcome files written before the change
carry a bare SHA-256 in a field named ``stdout_sha256``: their readers turn it into ``sha256:<hex>``,
so a digest of one algorithm is never taken as equal to a digest of the other, and what is shown
says which it is.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (~3.5 ms) on every wrapper's start
if TYPE_CHECKING:
    from blake3 import blake3

# blake3 is imported where a digest is made, not here: this module is on the path of every wrapper's
# start and of every outcome read, and most stdouts are empty (EMPTY is their digest, written out).

ALGORITHM = "blake3"
EMPTY = "blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"  # of no bytes
LEGACY = "sha256"  # outcome files and records from before: their field ``stdout_sha256``, a bare hex digest

_TAGGED = re.compile(r"(blake3|sha256):[0-9a-f]{64}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def new_digest() -> blake3:
    """A running digest: ``update`` with each chunk, ``finish`` at the end.

    One thread: the wrapper already hashes on a thread of its own beside the copy, and more threads only
    pay off for chunks far larger than a pipe's.
    """
    from blake3 import blake3

    return blake3(max_threads=1)


def finish(running: blake3) -> str:
    """The tagged digest of everything given to ``running``."""
    return f"{ALGORITHM}:{running.hexdigest()}"


def of_bytes(data: bytes) -> str:
    """The tagged digest of ``data``."""
    if not data:
        return EMPTY
    running = new_digest()
    running.update(data)
    return finish(running)


def from_legacy(hex_sha256: str) -> str:
    """A bare SHA-256 from a record written before the change, tagged as what it is."""
    return f"{LEGACY}:{hex_sha256}"


def is_tagged(value: str) -> bool:
    """Whether ``value`` is a digest this module writes or reads: an algorithm it knows, 64 hex digits."""
    return _TAGGED.fullmatch(value) is not None


def is_legacy_hex(value: str) -> bool:
    """Whether ``value`` is a bare SHA-256 as records from before the change hold it."""
    return _HEX64.fullmatch(value) is not None


def same_algorithm(one: str, other: str) -> bool:
    """Whether two tagged digests were made by the same algorithm (so that comparing them means something)."""
    return one.partition(":")[0] == other.partition(":")[0]
