"""What a supervision leaves a script (``submit --json``, ``supervise --json``): the job's result, and the
job's own exit code as ``srun`` reports it (``--job-exit-code``, docs/exit-codes.md)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from dunscaith.domain.model.jobs.exit_codes import SIGNAL_BASE
from dunscaith.domain.model.jobs.ids import ObjectId
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.state import AttemptState, JobOutcome, JobState, OutcomeKind

# The outcomes a job's own process decided. Escalated, abandoned and refused were decided by the policy,
# the user or the scheduler: the job's process (if it ever ran) did not end the job.
_ENDED_BY_ITS_PROCESS = frozenset({OutcomeKind.SUCCEEDED, OutcomeKind.FAILED, OutcomeKind.CANCELLED})


class ExitFrom(StrEnum):
    """Whose exit code a supervision ended with."""

    JOB = "job"  # the job's own: its exit code, or 128+n when a signal n ended it
    DUNSCAITH = "dunscaith"  # dunscaith's own (docs/exit-codes.md's first table)


@dataclass(frozen=True, slots=True)
class AttemptResult:
    number: int
    order: AttemptState
    object_id: ObjectId | None
    object_state: ObjectState | None
    exit_code: int | None
    signal: int | None


@dataclass(frozen=True, slots=True)
class RecordPlace:
    """Where the job's record is: the store (a record root, a server), its kind, and the host that owns it."""

    store: str
    backend: str  # sqlite, postgresql
    host: str


@dataclass(frozen=True, slots=True)
class JobResult:
    job: str
    cluster: str
    outcome: JobOutcome | None  # None: the supervisor ended before the job had one
    attempts: tuple[AttemptResult, ...]
    exit_code: int | None  # the job's own, from the attempt that ended it (None: not known, or not ended)
    signal: int | None  # the signal that ended it
    stdout: str | None
    stderr: str | None
    record: RecordPlace

    @property
    def as_job(self) -> int | None:
        """The code ``srun`` would exit with: the job's exit code, or 128+n when signal n ended it. None
        when the job's own process did not decide its outcome (escalated, abandoned, refused, no outcome
        yet) or its end is not known (cancelled before it started, a timeout without a code). Never 0
        for an outcome that is not success."""
        outcome = self.outcome
        if outcome is None or outcome.kind not in _ENDED_BY_ITS_PROCESS:
            return None
        if outcome.kind is OutcomeKind.SUCCEEDED:
            return 0
        if self.signal is not None and self.signal > 0:
            return SIGNAL_BASE + self.signal
        if self.exit_code is not None and 0 < self.exit_code < 256:
            return self.exit_code
        return None


def job_result(state: JobState, stdout: str | None, stderr: str | None, record: RecordPlace) -> JobResult:
    """The result of ``state`` (its last attempt's end is the job's), with where its output and record are."""
    current = state.current
    ended = state.outcome is not None and current is not None
    return JobResult(
        job=str(state.name), cluster=state.spec.cluster, outcome=state.outcome,
        attempts=tuple(AttemptResult(a.number, a.order, a.object_id, a.object_state, a.exit_code, a.signal)
                       for a in state.attempts),
        exit_code=current.exit_code if ended and current is not None else None,
        signal=current.signal if ended and current is not None else None,
        stdout=stdout, stderr=stderr, record=record)
