"""A time as this project's files and records hold it: ISO 8601, always naming its zone."""

from __future__ import annotations

from datetime import datetime

from dunscaith.domain.model.strict_json import DecodeError


def aware_time(text: str, name: str, error: type[DecodeError] = DecodeError) -> datetime:
    """``text`` as an ISO 8601 time that names its zone; ``error`` (naming the field ``name``) when it is not a
    time, or is one without a zone, which no writer of this project makes."""
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise error(f"{name} is not a time: {text!r}") from None
    if at.utcoffset() is None:
        raise error(f"{name} has no time zone")
    return at
