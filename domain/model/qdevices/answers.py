"""What a site said, classified: the only values the services decide from.

A job request (one that makes, or is part of making, a metered job) has three outcomes: a success
with a job id, a refusal (no job ran), or anything else, which means a job may exist. A read (state
or result) is good, a missed poll (asked again at the next poll), or an answer that ends the wait.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from dunscaith.domain.model.qdevices.redaction import MARKER


class JobAnswer(StrEnum):
    OK = "ok"
    REFUSED = "refused"
    UNKNOWN = "unknown"  # a job may exist: never sent again
    NOT_SENT = "not_sent"  # the request was proven never written: nothing left the machine


@dataclass(frozen=True, slots=True)
class NoAnswer:
    """No whole answer came to a request. ``written`` says whether any byte of the request may have
    left the machine: each adapter decides that from its transport's failure (for httpx: a failure
    to connect, resolve the name or get a connection is before the first byte; anything later is
    after it). Only a request proven unwritten is "not sent"."""

    written: bool
    detail: str


def job_answer_without_reply(failure: NoAnswer) -> JobAnswer:
    """The one rule for a job request that got no answer (seed 002: "no answer" means a job may
    exist): unless the request was proven never written, a job may exist, and the order is never
    sent again. One proven unwritten made nothing: the order stays unsent and a resume sends it."""
    return JobAnswer.UNKNOWN if failure.written else JobAnswer.NOT_SENT


class ReadKind(StrEnum):
    GOOD = "good"
    MISSED = "missed"  # no answer, 500 or more, too many connections: ask at the next poll
    ENDS = "ends"  # an answer that ends the wait at once


class Phase(StrEnum):
    """A job's state at the site, in the app's words."""

    CONFIGURING = "configuring"  # VLQ: created, not given to the scheduler
    WAITING = "waiting"  # pending, queued, running
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


ENDED_PHASES = frozenset({Phase.COMPLETED, Phase.FAILED, Phase.CANCELLED})


def classify_job_answer(status: int | None, refusals: frozenset[int], job_id_given: bool) -> JobAnswer:
    """The seed's table "The answer to a job request", for the HTTP status of one job request.

    ``status`` is None when no answer came (time-out, connection lost, half a body).
    """
    if status is None:
        return JobAnswer.UNKNOWN  # no answer, and no proof that nothing was written: see NoAnswer
    if 200 <= status < 300:
        return JobAnswer.OK if job_id_given else JobAnswer.UNKNOWN
    if status in refusals:
        return JobAnswer.REFUSED
    return JobAnswer.UNKNOWN  # a redirect, 500 or more, a 4xx that is no refusal here, 1xx


def classify_read(status: int | None, well_formed: bool, missed_statuses: frozenset[int] = frozenset()) -> ReadKind:
    """A read of a job's state or result. A good status with a body that does not parse ends the wait."""
    if status is None or status >= 500 or status in missed_statuses:
        return ReadKind.MISSED
    if 200 <= status < 300:
        return ReadKind.GOOD if well_formed else ReadKind.ENDS
    return ReadKind.ENDS


@dataclass(frozen=True, slots=True)
class JobRequestAnswer:
    kind: JobAnswer
    job: str | None = None
    status: int | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class StateRead:
    kind: ReadKind
    phase: Phase | None = None
    site_state: str | None = None  # the site's own word, kept in the record
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ResultRead:
    kind: ReadKind
    ready: bool = False  # good answer but no result yet (MQSS right after COMPLETED): a missed poll
    seconds: float | None = None  # device time measured by the site
    counts: Any = None  # JSON value: {bitstring: count} or a list of them
    detail: str = ""
    expired: bool = False  # with ENDS: the site no longer holds the result (Piast-Q result_expired)


@dataclass(frozen=True, slots=True)
class CheckAnswer:
    kind: JobAnswer  # OK: token accepted; REFUSED: token refused; UNKNOWN: no good answer
    detail: str = ""
    facts: Mapping[str, Any] = field(default_factory=dict)


_URL_FORBIDDEN = frozenset(chr(c) for c in range(0x20)) | {"\x7f"}


def job_id_url_safe(job: str) -> bool:
    """Whether a job id can be put in a URL path at all (a newline or control character cannot)."""
    return 0 < len(job) <= 512 and not any(ch in _URL_FORBIDDEN for ch in job) and job.strip() == job



def job_id_readable(job: str) -> bool:
    """Whether a recorded job id can name its job in a request: it fits in a URL and is not a
    redacted text (an id that held a secret is recorded with the secret taken out)."""
    return job_id_url_safe(job) and MARKER not in job


def shown(text: str) -> str:
    """Text from a site as one printable line: a newline or control character is escaped, so a
    site cannot add lines to the output."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
