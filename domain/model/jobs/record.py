"""The record of a job as stores keep it: a header and an append-only list of event lines.

Stores know nothing about event kinds: they keep ``kind`` and ``data`` as given and hand them back
in order. The typed events and their fold live beside this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.model.jobs.ids import JobId

JsonValue = Any  # a value json.dumps accepts: str, int, float, bool, None, lists and dicts of them


@dataclass(frozen=True, slots=True)
class HostIdentity:
    machine_id: str
    hostname: str


@dataclass(frozen=True, slots=True)
class EventLine:
    """One durable entry: its position, when it was committed, what kind of event, its fields."""

    seq: int  # 1, 2, 3 ... per job, no gaps
    at: datetime
    kind: str
    data: Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class JobRecord:
    job: JobId
    events: tuple[EventLine, ...]
    truncated_tail: bool = False  # a last entry that did not read whole (a crash mid-write)


@dataclass(frozen=True, slots=True)
class LoopHealth:
    """Display only: whether a supervisor holds the job's lock and when its loop last completed."""

    held: bool
    last_loop: datetime | None


@dataclass(frozen=True, slots=True)
class StoreIdentity:
    """Which store holds a record, for its first event and for display.

    ``host`` is the machine the store is bound to (a record root's HOST), or None for a store that
    is not bound to one machine (in memory; later a server). ``device``/``inode`` name the database
    file where there is one, so a record copied elsewhere is recognisably not the original.
    """

    backend: str  # "sqlite", "memory", ...
    location: str  # the database file, or the store's equivalent
    host: HostIdentity | None = None
    device: int | None = None
    inode: int | None = None
