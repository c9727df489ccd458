"""The recovery policy (DESIGN §4): what an ended object means for the job.

A node failure, a boot failure or a preemption is not the job's fault: it is tried again in a new
attempt (a new order, a new nonce), up to the job's ``max_attempts``. Any other end is the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.residual import ResidualPolicy
from dunscaith.domain.model.jobs.state import Attempt, JobOutcome, OutcomeKind

RECOVERABLE: frozenset[ObjectState] = frozenset(
    {ObjectState.NODE_FAIL, ObjectState.BOOT_FAIL, ObjectState.PREEMPTED}
)


@dataclass(frozen=True, slots=True)
class Policy:
    # how long a complete query may go on not listing an object before it is judged vanished
    absence_deadline: timedelta = timedelta(minutes=10)
    recoverable: frozenset[ObjectState] = RECOVERABLE
    # what an attempt of unknown outcome does once the job has its outcome (docs/residual.md)
    residual: ResidualPolicy = ResidualPolicy.LIST


@dataclass(frozen=True, slots=True)
class TryAgain:
    reason: str


Verdict = JobOutcome | TryAgain


def judge_end(ended: Attempt, attempts_made: int, max_attempts: int, policy: Policy) -> Verdict:
    """What an attempt's ended object means: the job's outcome, or another attempt."""
    state = ended.object_state
    if state is ObjectState.COMPLETED:
        return JobOutcome(OutcomeKind.SUCCEEDED, "exit code 0")
    if state in policy.recoverable:
        if attempts_made < max_attempts:
            return TryAgain(f"attempt {ended.number} ended {state}")
        return JobOutcome(OutcomeKind.FAILED, f"{state} on each of {attempts_made} attempt(s)")
    return JobOutcome(OutcomeKind.FAILED, describe_end(ended))


def describe_end(attempt: Attempt) -> str:
    parts = [str(attempt.object_state)]
    if attempt.exit_code is not None:
        parts.append(f"exit code {attempt.exit_code}")
    if attempt.signal is not None:
        parts.append(f"signal {attempt.signal}")
    if attempt.reason:
        parts.append(attempt.reason)
    return ", ".join(parts)
