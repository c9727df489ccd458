"""A seam for fault injection: the supervisor names each durable step as it passes it.

The real adapter ends the process there (SIGKILL) when the test environment names that point,
so a crash-point sweep can prove every step can be lost without breaking the record's promises.
"""

from __future__ import annotations

from typing import Protocol


class CrashPoints(Protocol):
    def reached(self, point: str) -> None: ...
