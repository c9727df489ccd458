"""A job's output files, read for display (``logs``, ``--follow``, a failure's last stderr lines) and
removed by ``prune --outputs``. Nothing about safety reads them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol


class OutputFollower(Protocol):
    def add(self, path: str, sink: Callable[[str], None], start: int = 0) -> None:
        """Copy what ``path`` holds from byte ``start`` on, and what is appended to it, into ``sink`` until
        ``stop``."""
        ...

    def stop(self) -> None:
        """Read what is left (a last line without its newline included) and stop."""
        ...


class OutputFiles(Protocol):
    def last_lines(self, path: str, count: int) -> list[str]:
        """The last ``count`` lines of ``path`` ([] when it does not read)."""
        ...

    def tail(self, path: str, count: int, *, limit: int | None = None) -> tuple[bytes, int]:
        """The last ``count`` lines of ``path`` as ``tail -n`` gives them (a last line without its newline
        counts), read from the end, and the size the file had then (where a follower goes on from).
        ``limit``: from its last ``limit`` bytes at most. OSError when it does not read."""
        ...

    def chunks(self, path: str) -> Iterator[bytes]:
        """The whole file, in pieces (OSError when it does not read)."""
        ...

    def follower(self) -> OutputFollower: ...

    def remove_folder(self, folder: str, under: str) -> bool:
        """Remove ``folder`` only if it is a real directory of this user directly under ``under``."""
        ...
