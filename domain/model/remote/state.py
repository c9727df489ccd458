"""What an instance directory means: its state, the status object, the answer to a termination call."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from dunscaith.domain.model.remote.control import OUTCOME, STDOUT_NOTE, Blocked, InstanceRecords, TerminateRequest

_FULL = frozenset({28, 122, 69})  # ENOSPC; EDQUOT on Linux, on macOS: "disk full" is what a user looks for


def disk_full(errno: int | None) -> bool:
    return errno in _FULL

STATUS_FORMAT = "dunscaith.remote.status/1"


class State(StrEnum):
    EMPTY = "empty"
    LAUNCHING = "launching"
    RUNNING = "running"
    TERMINATING = "terminating"
    FAILED = "failed"
    ENDED = "ended"
    LOST = "lost"


def state_of(records: InstanceRecords, live: bool) -> State:
    """``live`` must have been observed *before* the files were read: the lock is released last."""
    if records.outcome is not None:
        return State.ENDED
    if records.failure is not None:
        return State.FAILED
    if records.launching is None and not live:
        return State.EMPTY
    if not live:
        return State.LOST
    if records.instance is None:
        return State.LAUNCHING
    if records.terminated is not None:
        return State.TERMINATING
    return State.RUNNING


def blocked_text(note: Blocked, live: bool) -> str:
    """What the wrapper's note means, for a live view: "disk full: ..." when space (or quota) ran out."""
    head = "disk full" if disk_full(note.errno) else "a control file cannot be written"
    since = f"{note.reason}, since {note.since:%Y-%m-%d %H:%M:%S} UTC"
    if note.exit_code is not None:
        ended = f"the worker ended with exit code {note.exit_code}"
    elif note.signal is not None:
        ended = f"the worker ended by signal {note.signal}"
    else:
        ended = ""
    if live:
        if note.file == OUTCOME:
            keeps = f"{ended}; its outcome is kept by the process owner, which writes {OUTCOME} as soon as it can"
        elif note.file == STDOUT_NOTE:
            keeps = ("the worker's output waits to be written to its stdout file; nothing of it is dropped, and "
                     "the worker waits once its pipe is full")
        else:
            keeps = f"{note.file} is kept by the process owner until it can be written"
        return f"{head}: {keeps} ({since})"
    what = f"; {ended}, as the owner noted" if ended else ""
    return (f"{head}: the outcome is not known: the process owner could not write {note.file} ({since}) and "
            f"ended before it could{what}")


def status_object(directory: str, live: bool, records: InstanceRecords) -> dict[str, Any]:
    def rec(value: Any) -> Any:
        return None if value is None else value.to_json()

    return {
        "format": STATUS_FORMAT,
        "directory": directory,
        "live": live,
        "state": str(state_of(records, live)),
        "launching": rec(records.launching),
        "instance": rec(records.instance),
        "failure": rec(records.failure),
        "request": rec(records.request),
        "refused": [r.to_json() for r in records.refused],
        "terminated": rec(records.terminated),
        "killed": rec(records.killed),
        "outcome": rec(records.outcome),
        "blocked": rec(records.blocked),
    }


class Answer(StrEnum):
    """What ``remote terminate`` reports about its own request, and its exit code."""

    CONFIRMED = "confirmed"
    REFUSED = "refused"
    UNANSWERED = "unanswered"
    UNREQUESTED = "unrequested"

    @property
    def exit_code(self) -> int:
        return _EXIT[self]


_EXIT = {Answer.CONFIRMED: 0, Answer.REFUSED: 4, Answer.UNANSWERED: 5, Answer.UNREQUESTED: 6}


def answer_to(own: TerminateRequest, records: InstanceRecords, refused_before: Iterable[int]) -> Answer | None:
    """The answer to ``own`` found in ``records``, or None while there is none.

    A confirmation counts only when it confirms this very request; a refusal only when it is one
    written after this call looked (``refused_before`` are the refusals it saw then) and names this
    request, so the answer to another request is never taken for this one's.
    """
    if records.terminated is not None and records.terminated.request == own:
        return Answer.CONFIRMED
    seen = set(refused_before)
    if any(r.number not in seen and r.request == own for r in records.refused):
        return Answer.REFUSED
    return None
