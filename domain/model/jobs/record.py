"""The record of a job as stores keep it: a header and an append-only list of event lines.

Stores know nothing about event kinds: they keep ``kind`` and ``data`` as given and hand them back
in order. The typed events and their fold live beside this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dunscaith.domain.model.jobs.ids import JobId

JsonValue = Any  # a value json.dumps accepts: str, int, float, bool, None, lists and dicts of them


@dataclass(frozen=True, slots=True)
class HostIdentity:
    machine_id: str
    hostname: str


@dataclass(frozen=True, slots=True, init=False)
class EventLine:
    """One durable entry: its position, when it was committed, what kind of event, its fields."""

    seq: int  # 1, 2, 3 ... per job, no gaps
    at: datetime
    kind: str
    data: Mapping[str, JsonValue]

    def __init__(self, seq: int, at: datetime, kind: str, data: Mapping[str, JsonValue]) -> None:
        # A store builds one line per event of a record (100k for a long one): setting the slots
        # through their descriptors costs half of the frozen dataclass's own __init__, which goes
        # through object.__setattr__ per field. The line is as frozen once built.
        _SET_SEQ(self, seq)
        _SET_AT(self, at)
        _SET_KIND(self, kind)
        _SET_DATA(self, data)


_SET_SEQ, _SET_AT, _SET_KIND, _SET_DATA = (vars(EventLine)[name].__set__ for name in ("seq", "at", "kind", "data"))


@dataclass(frozen=True, slots=True)
class JobRecord:
    job: JobId
    events: tuple[EventLine, ...]
    truncated_tail: bool = False  # a last entry that did not read whole (a crash mid-write)


@dataclass(frozen=True, slots=True)
class RecordTail:
    """A record as ``status`` needs it: the store's newest folded snapshot of it, and the lines after.

    ``snapshot`` is kept as the store was given it (domain/model/jobs/snapshot.py makes and reads it);
    None when the store keeps none for the job, or cannot vouch for the lines it covers (then ``after``
    is 0 and ``events`` is the whole record)."""

    job: JobId
    snapshot: Mapping[str, JsonValue] | None
    after: int  # the last seq the snapshot covers: ``events`` are the lines after it, in order
    events: tuple[EventLine, ...]


@dataclass(frozen=True, slots=True)
class LoopHealth:
    """Display only: whether a supervisor holds the job's lock and when its loop last completed."""

    held: bool
    last_loop: datetime | None
    next_loop: datetime | None = None  # when the holder said it would loop next, where the store keeps it


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
