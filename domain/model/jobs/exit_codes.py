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


def for_status(outcome: JobOutcome | None) -> ExitCode:
    """How ``status JOB`` ends: as a script waiting on the job would read it. 0 while there is no outcome
    (still running, held, Unattended) or it succeeded; 1 for any outcome that is not success, a refused
    one too (status itself was not refused: 2 stays "your input")."""
    if outcome is None or outcome.kind is OutcomeKind.SUCCEEDED:
        return ExitCode.SUCCEEDED
    return ExitCode.NOT_SUCCESS


def for_signal(signum: int) -> int:
    return SIGNAL_BASE + signum
