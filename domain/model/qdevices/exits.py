"""Exit codes of qdevices and the reasons a call stops."""

from __future__ import annotations

from enum import IntEnum, StrEnum


class Exit(IntEnum):
    DONE = 0
    OPEN = 1  # an order stays open or unsent (a request not sent), a prepare failed, or a rule stopped the run
    UNKNOWN = 2  # a stop unknown (a job may exist); also bad input and refused calls
    PROGRAM = 3  # an error of the program


class StopReason(StrEnum):
    UNKNOWN = "unknown"
    NOT_SENT = "not_sent"  # a job request proven never written: the order stays unsent (or VLQ: unsubmitted)
    REFUSAL = "refusal"  # the rule refusal: a refused order stops the run unless on_refusal lets it go on
    SUBMIT_UNKNOWN = "submit_unknown"
    PREPARE = "prepare"
    STATUS_ERROR = "status_error"
    RESULT_ERROR = "result_error"
    RESULT_EXPIRED = "result_expired"
    WAIT = "wait"  # the wait time-out
    SIGNAL = "signal"
    RULE = "rule"  # a generic or user rule stopped the run before an order
    BUDGET = "budget"
    PROGRAM = "program"
    RECORD_WRITE = "record_write"


EXIT_OF: dict[StopReason, Exit] = {
    StopReason.UNKNOWN: Exit.UNKNOWN,
    StopReason.NOT_SENT: Exit.OPEN,
    StopReason.REFUSAL: Exit.OPEN,
    StopReason.SUBMIT_UNKNOWN: Exit.OPEN,
    StopReason.PREPARE: Exit.OPEN,
    StopReason.STATUS_ERROR: Exit.OPEN,
    StopReason.RESULT_ERROR: Exit.OPEN,
    StopReason.RESULT_EXPIRED: Exit.OPEN,
    StopReason.WAIT: Exit.OPEN,
    StopReason.SIGNAL: Exit.OPEN,
    StopReason.RULE: Exit.OPEN,
    StopReason.BUDGET: Exit.OPEN,
    StopReason.PROGRAM: Exit.PROGRAM,
    StopReason.RECORD_WRITE: Exit.PROGRAM,
}


def signal_exit(signum: int) -> int:
    return 128 + signum
