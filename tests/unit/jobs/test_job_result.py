"""The job's own exit code as ``srun`` reports it (docs/exit-codes.md, "The job's own exit code"): never 0
for an outcome that is not success, 128+n for a signal, none where the job's process did not decide."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.job_result import RecordPlace, job_result
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import Attempt, AttemptState, JobOutcome, JobState, OutcomeKind

PLACE = RecordPlace(store="/var/tmp/r", backend="sqlite", host="login1")
AT = datetime(2026, 12, 1, tzinfo=UTC)


def _state(kind: OutcomeKind | None, code: int | None, sig: int | None, attempts: int = 1) -> JobState:
    tried = tuple(Attempt(n, Nonce(f"n{n}"), AttemptState.RELEASED, ObjectId(f"{100 + n}"), ObjectState.FAILED,
                          exit_code=code if n == attempts else 9, signal=sig if n == attempts else None)
                  for n in range(1, attempts + 1))
    return JobState(spec=JobSpec(JobId("j"), "hpc", "slurm", ("true",)), host="login1", recorded_at=AT,
                    attempts=tried, outcome=None if kind is None else JobOutcome(kind, "d"))


@pytest.mark.parametrize(("kind", "code", "sig", "expected"), [
    (OutcomeKind.SUCCEEDED, 0, None, 0),
    (OutcomeKind.FAILED, 3, None, 3),
    (OutcomeKind.FAILED, None, 9, 137),
    (OutcomeKind.FAILED, 0, None, None),  # a time limit Slurm reports as 0:0: not 0, dunscaith's 1
    (OutcomeKind.FAILED, None, None, None),
    (OutcomeKind.CANCELLED, None, 15, 143),
    (OutcomeKind.CANCELLED, None, None, None),  # cancelled before it started
    (OutcomeKind.ESCALATED, 3, None, None),
    (OutcomeKind.ABANDONED, 3, None, None),
    (OutcomeKind.REFUSED, None, None, None),
    (None, None, None, None),
])
def test_the_code_srun_would_give(kind: OutcomeKind | None, code: int | None, sig: int | None,
                                  expected: int | None) -> None:
    assert job_result(_state(kind, code, sig), None, None, PLACE).as_job == expected


def test_the_last_attempt_is_the_jobs_end_and_every_attempt_is_listed() -> None:
    result = job_result(_state(OutcomeKind.FAILED, 4, None, attempts=2), "/o", "/e", PLACE)
    assert (result.exit_code, result.signal, result.as_job) == (4, None, 4)
    assert [(a.number, a.object_id, a.exit_code) for a in result.attempts] == [(1, "101", 9), (2, "102", 4)]
    assert (result.job, result.cluster, result.stdout, result.stderr, result.record) == ("j", "hpc", "/o", "/e", PLACE)


def test_no_outcome_no_code_of_the_job() -> None:
    result = job_result(_state(None, 3, None), None, None, PLACE)
    assert (result.exit_code, result.signal, result.outcome) == (None, None, None)
