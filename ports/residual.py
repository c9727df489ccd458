"""The residual list: per-user entries kept where every login node of the user sees them."""

from __future__ import annotations

from typing import Protocol

from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReading

__all__ = ["ResidualList", "ResidualReading"]


class ResidualError(Exception):
    """The residual list cannot be read or written (an unsafe directory, a full disk)."""


class ResidualList(Protocol):
    def add(self, entry: ResidualEntry) -> bool:
        """Add ``entry`` durably; False when an entry with its key is there already (that one stands)."""
        ...

    def entries(self) -> list[ResidualReading]:
        """Every entry, by job then key; damaged ones are listed with their problem."""
        ...

    def drop(self, entry: ResidualEntry) -> None:
        """Remove ``entry`` (an expired one) if it is still there."""
        ...
