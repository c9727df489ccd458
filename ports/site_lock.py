"""One live call per site, from one host: an exclusive flock and a holder file."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol


class SiteLockRefused(Exception):
    """The site lock cannot be taken; the message says who holds it and what to do."""


@dataclass(frozen=True, slots=True)
class Holder:
    host: str
    pid: int
    started: str  # ISO time the holder took the lock


class SiteLock(Protocol):
    def hold(self, site: str) -> AbstractContextManager[Holder]:
        """Take the site's lock without waiting, for the duration of the ``with`` block."""
        ...

    def unlock(self, site: str, host: str) -> Holder | None:
        """Clear a holder file left by ``host`` (checked there first); the holder cleared, or None."""
        ...
