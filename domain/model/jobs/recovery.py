"""The opt-in recovery of an attempt that ended on one of the known causes (issue 39, docs/supervisor.md).

- ``on_out_of_memory = {memory_factor, max_memory, attempts}``: an attempt that ended out of memory (Slurm's
  ``OUT_OF_MEMORY``) gets a new attempt with its memory times the factor, never beyond the maximum, up to
  ``attempts`` such attempts.
- ``on_time_limit = {time_factor, max_time, attempts}``: the same for an attempt that reached its time limit
  (Slurm's ``TIMEOUT``; the local scheduler's watchdog), growing the time limit.
- ``requeue_on_time_limit = N`` with a ``--signal-before``: an attempt that reached its time limit after its
  signal (it could checkpoint) gets a new attempt with the same needs, up to N times: a checkpoint
  requeue, not a failure. It is asked before the time limit's growth.

All of it is recorded in the job's spec at submit (the cluster's settings, then submit's flags), so that
every supervisor of the job decides alike. Each rule's attempts are counted from the record (the attempts
it made, by their cause), and each new attempt is recorded with its cause and why. Off by default: an end
out of memory or past the time limit is then the outcome (``failed``), as before. Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from dunscaith.domain.model.jobs.attempt_needs import AttemptCause
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.recovery_settings import Growth, Recovery, SignalBefore
from dunscaith.domain.model.jobs.resources import (
    MAX_MEMORY_MB,
    MAX_TIME_LIMIT_S,
    Resources,
    format_memory,
    format_time_limit,
)
from dunscaith.domain.model.jobs.state import Attempt, JobOutcome, JobState, OutcomeKind

# ---- the decision ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Renewal:
    """A new attempt the recovery policy makes: its needs, its cause, and why in words."""

    needs: Resources
    cause: AttemptCause
    why: str


def made_by(state: JobState, cause: AttemptCause) -> int:
    """How many attempts of the record a cause made."""
    return sum(1 for a in state.attempts if a.cause == cause)


def by_policy(state: JobState) -> int:
    """The attempts the node-failure policy (``recovery.attempts``) counts: those the growth and checkpoint
    rules made are their own rules' to count."""
    ruled = {AttemptCause.OUT_OF_MEMORY, AttemptCause.TIME_LIMIT, AttemptCause.CHECKPOINT}
    return sum(1 for a in state.attempts if a.cause not in ruled)


def after_end(
    state: JobState, ended: Attempt, recovery: Recovery, signal_before: SignalBefore | None
) -> Renewal | JobOutcome | None:
    """What the recovery policy makes of an ended attempt: a new attempt, the outcome (a rule applied and
    could not go on: its attempts used, or its maximum reached), or None (no rule of it applies: the
    recovery policy of node failures judges, as before)."""
    needs = ended.needs if ended.needs is not None else state.spec.resources
    if ended.object_state is ObjectState.TIMEOUT:
        requeue = _checkpoint(state, ended, needs, recovery, signal_before)
        if requeue is not None:
            return requeue
        if recovery.on_time_limit is not None:
            return _grow(state, ended, needs, recovery.on_time_limit, AttemptCause.TIME_LIMIT)
    if ended.object_state is ObjectState.OUT_OF_MEMORY and recovery.on_out_of_memory is not None:
        return _grow(state, ended, needs, recovery.on_out_of_memory, AttemptCause.OUT_OF_MEMORY)
    return None


def _checkpoint(
    state: JobState, ended: Attempt, needs: Resources, recovery: Recovery, signal_before: SignalBefore | None
) -> Renewal | None:
    """A time limit reached after the signal: the same needs again, while requeues are left."""
    if signal_before is None or recovery.requeue_on_time_limit <= 0:
        return None
    done = made_by(state, AttemptCause.CHECKPOINT)
    if done >= recovery.requeue_on_time_limit:
        return None  # every requeue used: the time limit's own rule (or the outcome) decides
    return Renewal(
        needs,
        AttemptCause.CHECKPOINT,
        f"attempt {ended.number} reached its time limit after its signal ({signal_before}): checkpoint "
        f"requeue {done + 1} of {recovery.requeue_on_time_limit}, same needs",
    )


_WORDS = {
    AttemptCause.OUT_OF_MEMORY: ("memory", "max_memory", "recovery.on_out_of_memory", "--mem"),
    AttemptCause.TIME_LIMIT: ("time limit", "max_time", "recovery.on_time_limit", "--time"),
}


def _grow(
    state: JobState, ended: Attempt, needs: Resources, growth: Growth, cause: AttemptCause
) -> Renewal | JobOutcome:
    need, maximum_key, rule, flag = _WORDS[cause]
    memory = cause is AttemptCause.OUT_OF_MEMORY
    current = needs.memory_mb if memory else needs.time_limit_s
    shown = format_memory if memory else format_time_limit
    end = f"attempt {ended.number} ended {ended.object_state}"
    if current is None:
        return _failed(f"{end}; {rule} has no {need} to grow (the job gave none: give {flag})")
    done = made_by(state, cause)
    if done >= growth.attempts:
        return _failed(f"{end}; {rule}'s {growth.attempts} attempt(s) are used")
    grown = grown_value(current, growth, MAX_MEMORY_MB if memory else MAX_TIME_LIMIT_S)
    if grown <= current:
        return _failed(f"{end} with {need} {shown(current)}, already at {maximum_key} {shown(growth.maximum)}")
    new = replace(needs, memory_mb=grown) if memory else replace(needs, time_limit_s=grown)
    return Renewal(
        new,
        cause,
        f"{end}: {need} {shown(current)} -> {shown(grown)} ({rule}, attempt {done + 1} of {growth.attempts})",
    )


def grown_value(current: int, growth: Growth, ceiling: int) -> int:
    """``current`` times the factor, rounded up, at most the maximum (and the need's own bound); never
    below ``current`` (a maximum below what was asked grows nothing)."""
    target = min(math.ceil(current * growth.factor), growth.maximum, ceiling)
    return max(target, current)


def _failed(detail: str) -> JobOutcome:
    return JobOutcome(OutcomeKind.FAILED, detail)
