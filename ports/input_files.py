"""Files a user names for a call (a manifest, a circuit): read whole, but only when a read can end."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class InputRefused(OSError):
    """The name holds no regular file of at most the bound (a FIFO, ``/dev/zero``, a folder, a giant): it
    is not read. The message says why and what is read, without the path."""


class InputFiles(Protocol):
    def read(self, path: Path, limit: int) -> bytes:
        """The bytes of the regular file ``path`` (links followed), at most ``limit`` of them; FileNotFoundError,
        InputRefused, or another OSError."""
        ...
