"""How a dunscaith command ends, as an exit code (DESIGN §4)."""

from __future__ import annotations

from enum import IntEnum

from dunscaith.domain.model.jobs.state import JobOutcome, OutcomeKind


class ExitCode(IntEnum):
    SUCCEEDED = 0
    NOT_SUCCESS = 1  # the job's outcome is not success
    BAD_INPUT = 2  # bad input or refused (wrong host, network filesystem, lock held elsewhere)
    INTERNAL = 3
    GAVE_UP = 4  # the supervisor could not act for longer than supervise.giveup
    OUTSTANDING = 5  # work outstanding after supervise.wait


SIGNAL_BASE = 128

_BY_OUTCOME = {
    OutcomeKind.SUCCEEDED: ExitCode.SUCCEEDED,
    OutcomeKind.FAILED: ExitCode.NOT_SUCCESS,
    OutcomeKind.ESCALATED: ExitCode.NOT_SUCCESS,
    OutcomeKind.CANCELLED: ExitCode.NOT_SUCCESS,
    OutcomeKind.ABANDONED: ExitCode.NOT_SUCCESS,
    OutcomeKind.REFUSED: ExitCode.BAD_INPUT,
}


def for_outcome(outcome: JobOutcome) -> ExitCode:
    return _BY_OUTCOME[outcome.kind]


def for_signal(signum: int) -> int:
    return SIGNAL_BASE + signum
