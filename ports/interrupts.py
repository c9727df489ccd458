"""A request to stop, from outside the process (a signal, in the real programs), seen between steps.

The supervisor drains on it (seed 000); a live qdevices call stops with a stop line (seed 002). Neither
is ever interrupted in the middle of a request.
"""

from __future__ import annotations

from typing import Protocol


class Interrupts(Protocol):
    def pending(self) -> str | None:
        """The name of the first stop signal received (SIGINT, SIGTERM, SIGHUP), or None."""
        ...

    def wait(self, seconds: float) -> str | None:
        """Wait up to ``seconds``; return early with the signal's name when one arrives (or already has),
        or with None after ``wake``."""
        ...

    def wake(self) -> None:
        """End the current (or next) ``wait`` early without a stop; safe from any thread."""
        ...
