"""How every store turns an event's time and fields into what it keeps, and back.

Both stores go through the same functions, so a value that one store refuses the other refuses too,
and what comes back out is a copy the caller cannot change behind the store's back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from types import MappingProxyType
from typing import Any


def utc(at: datetime) -> datetime:
    """The instant ``at`` in UTC; a time without a zone is refused, since it names no instant."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"event time {at.isoformat()} has no time zone")
    return at.astimezone(UTC)


@lru_cache(maxsize=16)
def encode_time(at: datetime) -> str:
    # Fixed width (microseconds always present) so the text sorts as the time does. The last few are kept:
    # a sweep's loop beats hundreds of locks with the same two times.
    return utc(at).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def decode_time(text: str) -> datetime:
    at = datetime.fromisoformat(text)
    # what encode_time wrote reads back in UTC already: no conversion (half the cost of a row's time)
    return at if at.tzinfo is UTC else at.astimezone(UTC)


def encode_data(data: Mapping[str, Any]) -> str:
    """Canonical JSON text of an event's fields; anything JSON cannot carry exactly is refused."""
    if not isinstance(data, Mapping):
        raise TypeError(f"event data must be a mapping, not {type(data).__name__}")
    try:
        return json.dumps(dict(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"event data is not JSON: {exc}") from None


def decode_data(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"event data is a JSON {type(value).__name__}, not an object")
    return value


_SCALARS = (str, int, float, bool, type(None))


class ReadDecoder:
    """The fields of one read's rows, each distinct text decoded once.

    A long record repeats a handful of texts (a supervisor's observations of one object): decoding
    each once, and handing every row of the same text one read-only mapping, is what keeps reading it
    near the cost of fetching it. Every mapping is read-only, and one is shared between rows only when
    it holds nothing a caller could change (no list, no object inside): what a caller does to what it
    read reaches neither the store, nor a later read, nor another row. A decoder lives for one read,
    so nothing outlives it; a text that does not decode raises each time it is met (ValueError).
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str, Mapping[str, Any]] = {}

    def data(self, text: str) -> Mapping[str, Any]:
        shared = self._seen.get(text)
        if shared is not None:
            return shared
        value = decode_data(text)
        read_only = MappingProxyType(value)
        if all(isinstance(v, _SCALARS) for v in value.values()):
            self._seen[text] = read_only
        return read_only
