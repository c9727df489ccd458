"""Many names in as few calls as the operating system allows: chunked only by argument length."""

from __future__ import annotations

from collections.abc import Sequence

# Linux caps ONE argument at 128 KiB (MAX_ARG_STRLEN); stay well below it.
MAX_ARGUMENT = 100_000


def chunk(values: Sequence[str], *, limit: int = MAX_ARGUMENT, prefix: str = "--name=") -> list[list[str]]:
    """Split ``values`` into comma-joined groups whose ``prefix + ','.join(group)`` fits in ``limit``."""
    chunks: list[list[str]] = []
    current: list[str] = []
    size = len(prefix.encode())
    for value in values:
        width = len(value.encode()) + (1 if current else 0)
        if len(prefix.encode()) + len(value.encode()) > limit:
            raise ValueError(f"a single value of {len(value)} characters does not fit in one argument")
        if current and size + width > limit:
            chunks.append(current)
            current, size, width = [], len(prefix.encode()), len(value.encode())
        current.append(value)
        size += width
    if current:
        chunks.append(current)
    return chunks
