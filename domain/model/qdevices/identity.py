"""Where a record is: the identity its start line carries, compared before a resume sends."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RecordIdentity:
    host: str
    path: str  # absolute
    device: int
    inode: int

    def mismatch(self, actual: RecordIdentity) -> str | None:
        """Why ``actual`` (the file as found now) is not the record this start line names, or None."""
        for name in ("host", "path", "device", "inode"):
            if getattr(self, name) != getattr(actual, name):
                return f"its start line names {name} {getattr(self, name)!r}, here it is {getattr(actual, name)!r}"
        return None
