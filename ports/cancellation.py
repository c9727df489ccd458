"""A request to stop supervising (a signal, in the real program), seen by the loop between steps."""

from __future__ import annotations

from typing import Protocol


class Cancellation(Protocol):
    def requested(self) -> bool: ...

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True (early) when a stop is requested."""
        ...
