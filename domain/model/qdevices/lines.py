"""The lines of a run's record: one JSON object per line, each of a known type with exact fields.

Every line carries ``type`` and ``at`` (UTC, ISO 8601). A line that does not match its type exactly
is someone else's or damaged, and the record is refused rather than half-understood.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from dunscaith.domain.model.recorded_time import aware_time
from dunscaith.domain.model.strict_json import DecodeError, FieldSpec, check_fields, dumps_canonical, loads_object

APP = "qdevices"
FORMAT = 1


class LineType(StrEnum):
    START = "start"  # the first line; again at each resume
    SUBMITTING = "submitting"  # durable before the first request of an order
    CREATED = "created"  # VLQ: CreateJob answered with a job id
    UPLOADED = "uploaded"  # VLQ: files uploaded, written just before SubmitJob
    SUBMITTED = "submitted"  # the job id of a job that will run
    STATUS = "status"  # a read of the job's state, or a missed poll
    RESULT = "result"  # the job ended: completed, failed or cancelled
    REFUSED = "refused"  # the site refused: no job ran
    NOT_SUBMITTED = "not_submitted"  # a VLQ job proven never submitted
    NOT_SENT = "not_sent"  # a request proven never written (no connection): the step it names did not happen
    STOP = "stop"  # the call ended before the run did, with its reason
    RESOLVE = "resolve"  # a decision given with `qdevices resolve`
    TORN = "torn"  # the line before this one was cut by a crash mid-write


_S: tuple[type, ...] = (str,)
_I: tuple[type, ...] = (int,)
_OS: tuple[type, ...] = (str, type(None))
_OI: tuple[type, ...] = (int, type(None))
_ON: tuple[type, ...] = (int, float, type(None))
_ANY_JSON: tuple[type, ...] = (dict, list, type(None))

SPECS: dict[LineType, FieldSpec] = {
    LineType.START: {
        "app": _S, "format": _I, "site": _S, "site_device": _S, "run": _S, "manifest": _S,
        "host": _S, "path": _S, "device": _I, "inode": _I, "pid": _I, "orders": (list,), "resume": (bool,),
        "job_seconds_limit": _I,
    },
    LineType.SUBMITTING: {"order": _I, "name": _S},
    LineType.CREATED: {"order": _I, "job": _S},
    LineType.UPLOADED: {"order": _I, "job": _S},
    LineType.SUBMITTED: {"order": _I, "job": _S},
    LineType.STATUS: {"order": _I, "job": _S, "state": _OS, "missed": _OS},
    LineType.RESULT: {"order": _I, "job": _S, "outcome": _S, "seconds": _ON, "counts": _ANY_JSON},
    LineType.REFUSED: {"order": _I, "status": _OI, "detail": _S},
    LineType.NOT_SUBMITTED: {"order": _I, "job": _S, "detail": _S},
    LineType.NOT_SENT: {"order": _I, "job": _OS, "step": _S, "detail": _S},
    LineType.STOP: {"reason": _S, "order": _OI, "job": _OS, "detail": _S},
    LineType.RESOLVE: {"order": _I, "option": _S, "job": _OS, "counts_at_limit": (bool,), "final": (bool,)},
    LineType.TORN: {"bytes": _I},
}


@dataclass(frozen=True, slots=True)
class Line:
    type: LineType
    at: datetime
    data: Mapping[str, Any]

    @property
    def order(self) -> int | None:
        value = self.data.get("order")
        return value if isinstance(value, int) else None


def make(kind: LineType, at: datetime, **data: Any) -> Line:
    check_fields(data, SPECS[kind], f"{kind.value} line")
    return Line(kind, at, data)


def encode(line: Line) -> bytes:
    return dumps_canonical({"type": line.type.value, "at": line.at.astimezone(UTC).isoformat(), **line.data})


def decode(text: str | bytes, where: str) -> Line:
    obj = loads_object(text)
    kind_text = obj.pop("type", None)
    at_text = obj.pop("at", None)
    try:
        kind = LineType(kind_text)
    except ValueError:
        raise DecodeError(f"{where}: unknown line type {kind_text!r}") from None
    if not isinstance(at_text, str):
        raise DecodeError(f"{where}: missing or bad field at")
    at = aware_time(at_text, f"{where}: field at")
    check_fields(obj, SPECS[kind], f"{where} ({kind.value})")
    if kind is LineType.START and not all(isinstance(n, str) for n in obj["orders"]):
        raise DecodeError(f"{where} (start): orders must be names")
    return Line(kind, at, obj)
