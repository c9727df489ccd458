"""Where a run's record lives: append a synced line, read a record, find a site's records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from dunscaith.domain.model.qdevices.decisions import OlderDecision
from dunscaith.domain.model.qdevices.identity import RecordIdentity
from dunscaith.domain.model.qdevices.lines import Line


class RecordUnreadable(Exception):
    """The record is missing, not a record of this app, or damaged in its middle; the message says which."""


class RecordWriteFailed(Exception):
    """A line could not be made durable. The call must stop before any further request."""


@dataclass(frozen=True, slots=True)
class RecordRead:
    path: str
    lines: tuple[Line, ...]
    actual: RecordIdentity  # where the file is now (host, path, device, inode)
    torn_tail: bool = False  # the last line was cut by a crash mid-write; the rest reads


class RecordAppender(Protocol):
    path: str

    def append(self, line: Line) -> None:
        """Write, flush and sync one line; RecordWriteFailed if it is not durable."""
        ...

    def close(self) -> None: ...


class RunRecords(Protocol):
    def create(self, site: str, run: str, first: Line) -> RecordAppender:
        """A new record in the run folder of ``run``; ``first`` (a start line) gets the file's identity."""
        ...

    def open_append(self, path: str) -> RecordAppender:
        """Append to an existing record (a resume); a torn last line is first marked by a "torn" line."""
        ...

    def read(self, path: str) -> RecordRead: ...

    def is_newest_in_run_folder(self, path: str) -> bool: ...

    def is_in_records_folder(self, path: str) -> bool: ...

    def site_records(self, site: str, older: Sequence[str]) -> list[str]:
        """Every record of the site where it is: the records folder, then each older_records entry."""
        ...

    def older_decisions(self, site: str) -> list[OlderDecision]: ...

    def add_older_decision(self, site: str, decision: OlderDecision) -> None:
        """One synced line in the site's older_decisions.jsonl (the caller holds the site lock)."""
        ...
