"""The supervision decision: what a query's answer means (events) and what to do next (steps).

``observe`` turns one batched query into the events worth committing; ``plan`` turns the state into
the steps to take now. Both are pure: the supervisor commits the events and performs the steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import recovery
from dunscaith.domain.model.jobs.attempt_needs import AttemptCause
from dunscaith.domain.model.jobs.ids import ObjectId
from dunscaith.domain.model.jobs.objects import ObjectState, ObjectView, QueryResult
from dunscaith.domain.model.jobs.policy import Policy, TryAgain, judge_end
from dunscaith.domain.model.jobs.residual import ResidualPolicy, ResidualReason
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.settlement import outstanding
from dunscaith.domain.model.jobs.state import (
    Attempt,
    AttemptState,
    EscalationReason,
    JobOutcome,
    JobState,
    OutcomeKind,
)

_FINDABLE = frozenset({AttemptState.SUBMITTING, AttemptState.UNKNOWN})


@dataclass(frozen=True, slots=True)
class MarkUnknown:
    """A "submitting" attempt whose sender is gone: its reply can never come now."""

    attempt: int


@dataclass(frozen=True, slots=True)
class StartAttempt:
    attempt: int
    reason: str
    needs: Resources | None = None  # None: the job's needs (attempt_needs.py)
    cause: str | None = None  # an AttemptCause value when something gave it needs of its own


@dataclass(frozen=True, slots=True)
class Release:
    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class Cancel:
    """Stop an object that never started and never will be released (a late object, an old attempt's)."""

    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class MoveToResidual:
    """An attempt of unknown outcome after the outcome (the default policy), or an open attempt of an
    abandoned job, goes to the residual list."""

    attempt: int
    reason: ResidualReason = ResidualReason.UNKNOWN


@dataclass(frozen=True, slots=True)
class Requeue:
    """The user asked for a requeue of the current, started object."""

    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class ReportUncertain:
    """A requeue was committed and its sender died before its answer: report it, never resend it."""

    attempt: int


@dataclass(frozen=True, slots=True)
class Hold:
    """The user asked for a hold: hold the current object, released but not started."""

    attempt: int
    object_id: ObjectId


@dataclass(frozen=True, slots=True)
class Escalate:
    """Commit an escalation: something a person must decide (the manual residual policy)."""

    reason: EscalationReason
    attempt: int
    detail: str


@dataclass(frozen=True, slots=True)
class Conclude:
    outcome: JobOutcome


@dataclass(frozen=True, slots=True)
class Settle:
    pass


Step = (MarkUnknown | StartAttempt | Release | Hold | Requeue | ReportUncertain | Cancel | MoveToResidual | Escalate
        | Conclude | Settle)


def _escalated(state: JobState, reason: EscalationReason, attempt: int) -> bool:
    return any(e.reason is reason and e.attempt == attempt for e in state.escalations)


def _vanished(state: JobState, attempt: Attempt, now: datetime, policy: Policy) -> bool:
    return attempt.absent_since is not None and now - attempt.absent_since > policy.absence_deadline


def _observed(attempt: Attempt, obj: ObjectView) -> list[ev.Event]:
    """The object as the answer shows it, when that differs from the record (none when nothing changed)."""
    same = (attempt.object_state is obj.state and attempt.exit_code == obj.exit_code
            and attempt.signal == obj.signal and attempt.absent_since is None)
    if same:
        return []
    return [ev.Observed(attempt.number, obj.object_id, str(obj.state), obj.exit_code, obj.signal, obj.reason)]


def stale(result: QueryResult, last_action: datetime | None) -> bool:
    """An answer asked before the supervisor's last action on the job says nothing about that action:
    it never becomes an observation (docs/supervisor.md)."""
    return result.asked_at is not None and last_action is not None and result.asked_at < last_action


def observe(state: JobState, result: QueryResult, now: datetime, policy: Policy) -> list[ev.Event]:
    """The events one query's answer adds to the record (none when nothing changed)."""
    out: list[ev.Event] = []
    for attempt in state.attempts:
        if attempt.order is AttemptState.REFUSED or attempt.ended or attempt.residual:
            continue  # final, or the residual list's now; a scheduler forgetting an ended object says nothing
        mine = [o for o in result.objects if o.name == state.name and o.nonce == attempt.nonce]
        out += _attempt_events(state, attempt, mine, result.complete, now, policy)
    return out


def _attempt_events(state: JobState, attempt: Attempt, mine: list[ObjectView], complete: bool, now: datetime,
                    policy: Policy) -> list[ev.Event]:
    """What the objects carrying one open attempt's nonce say of it: one case per count and kind of match."""
    if len(mine) > 1:
        return _duplicate_events(state, attempt, mine)
    if not mine:
        return _absence_events(state, attempt, now, policy) if complete else []
    obj = mine[0]
    if attempt.order in _FINDABLE:
        return _found_events(attempt, obj)
    if obj.object_id != attempt.object_id:
        return _mismatch_events(state, attempt, obj)
    if attempt.order is AttemptState.CREATED:
        return [ev.Confirmed(attempt.number, obj.object_id), *_observed(attempt, obj)]
    return _observed(attempt, obj)


def _duplicate_events(state: JobState, attempt: Attempt, mine: list[ObjectView]) -> list[ev.Event]:
    """Duplicate: more than one object carries the attempt's nonce; escalate once."""
    if _escalated(state, EscalationReason.DUPLICATE, attempt.number):
        return []
    ids = ", ".join(sorted(o.object_id for o in mine))
    return [ev.Escalated(str(EscalationReason.DUPLICATE), attempt.number,
                         f"objects {ids} all carry attempt {attempt.number}'s nonce")]


def _absence_events(state: JobState, attempt: Attempt, now: datetime, policy: Policy) -> list[ev.Event]:
    """Absence, from a complete answer only (an incomplete answer proves nothing about absence): the first
    one is recorded, and one longer than the absence deadline escalates once as vanished."""
    if attempt.absent_since is None:
        return [ev.Absent(attempt.number)]
    if _vanished(state, attempt, now, policy) and not _escalated(state, EscalationReason.VANISHED, attempt.number):
        what = f"object {attempt.object_id}" if attempt.has_object else "no object"
        since = f"{attempt.absent_since:%Y-%m-%dT%H:%M:%SZ}"
        return [ev.Escalated(str(EscalationReason.VANISHED), attempt.number,
                             f"attempt {attempt.number}: {what} listed since {since}")]
    return []


def _found_events(attempt: Attempt, obj: ObjectView) -> list[ev.Event]:
    """Found: an attempt whose create's answer never came (submitting, unknown) shows its object, which is
    confirmed, held as made, and observed from there."""
    attempt_now = Attempt(attempt.number, attempt.nonce, AttemptState.CONFIRMED, obj.object_id, ObjectState.HELD)
    return [ev.Found(attempt.number, obj.object_id), ev.Confirmed(attempt.number, obj.object_id),
            *_observed(attempt_now, obj)]


def _mismatch_events(state: JobState, attempt: Attempt, obj: ObjectView) -> list[ev.Event]:
    """Mismatch: another object than the recorded one carries the attempt's nonce; escalate once."""
    if _escalated(state, EscalationReason.MISMATCH, attempt.number):
        return []
    return [ev.Escalated(str(EscalationReason.MISMATCH), attempt.number,
                         f"recorded object {attempt.object_id}, but {obj.object_id} carries "
                         f"attempt {attempt.number}'s nonce")]


def _blocking_escalation(state: JobState) -> str | None:
    """An escalation about the current attempt stops the job: the policy cannot go on by itself."""
    current = state.current
    for esc in state.escalations:
        if current is None or esc.attempt != current.number:
            continue
        if esc.reason is EscalationReason.VANISHED and current.order is AttemptState.UNKNOWN:
            continue  # an unknown attempt that never showed is presumed not made: the policy may go on
        return f"{esc.reason}: {esc.detail}"
    return None


def _open_object(current: Attempt) -> bool:
    """The current attempt has an object that may still run: one it made, not ended, not refused."""
    return current.object_id is not None and not current.ended and current.order is not AttemptState.REFUSED


def _cancel_steps(current: Attempt) -> list[Step]:
    """A confirmed ``cancel``: stop the open object once, then conclude "cancelled" when none is open (never
    while a create is in flight); until then wait for the stop to show in a query."""
    oid = current.object_id
    open_object = _open_object(current)
    if open_object and not current.cancelling:
        assert oid is not None
        return [Cancel(current.number, oid)]
    if not open_object and current.order is not AttemptState.SUBMITTING:
        return [Conclude(JobOutcome(OutcomeKind.CANCELLED, f"cancelled by the user (attempt {current.number}: "
                                                        f"{current.order})"))]
    return []  # wait for the stop to show in a query


def _resubmit_steps(state: JobState, current: Attempt) -> list[Step] | None:
    """A confirmed ``resubmit`` of the current attempt: cancel its object while it has not started, then
    start the next attempt once it is gone (or was never made). None: no resubmit, or a void one."""
    if state.resubmit_of != current.number:
        return None
    oid = current.object_id
    open_object = _open_object(current)
    if open_object and current.object_state in (ObjectState.HELD, ObjectState.PENDING, None):
        assert oid is not None
        return [] if current.cancelling else [Cancel(current.number, oid)]
    replaced = current.cancelling or (oid is None and current.order is AttemptState.UNKNOWN)
    if not open_object and replaced:
        return [_resubmitted(state, current, f"attempt {current.number} resubmitted by the user")]
    return None  # it started before the cancel: the resubmit is void and the attempt is judged as always


def _resubmitted(state: JobState, current: Attempt, reason: str) -> StartAttempt:
    """The attempt a confirmed resubmit makes: with the needs it gave (recorded with why), else the current
    attempt's own (an attempt that grew keeps what it grew to)."""
    if state.next_needs is not None:
        shown = " ".join(state.next_needs.shown()) or "the job's needs"
        return StartAttempt(current.number + 1, f"{reason} with {shown}", state.next_needs, AttemptCause.RESUBMIT)
    if current.needs is not None and current.needs != state.spec.resources:
        return StartAttempt(current.number + 1, reason, current.needs, AttemptCause.RESUBMIT)
    return StartAttempt(current.number + 1, reason)


def _again(state: JobState, current: Attempt, reason: str) -> StartAttempt:
    """Another attempt in place of one that did not run (it never appeared, a node failed): with what the
    current attempt asked for, and its cause (a grown attempt that never ran is tried again grown)."""
    if current.needs is not None and (current.needs != state.spec.resources or current.cause):
        return StartAttempt(current.number + 1, reason, current.needs, current.cause or None)
    return StartAttempt(current.number + 1, reason)


def _judged(state: JobState, current: Attempt, max_attempts: int, policy: Policy) -> Step:
    """An ended attempt: the opt-in recovery of its known causes first (recovery.py: out of memory, time
    limit, checkpoint), then the recovery policy of node failures, counting its own attempts."""
    if not state.given_up:
        renewal = recovery.after_end(state, current, state.spec.recovery, state.spec.signal_before)
        if isinstance(renewal, recovery.Renewal):
            return StartAttempt(current.number + 1, renewal.why, renewal.needs, renewal.cause)
        if renewal is not None:
            return Conclude(renewal)
    counted = recovery.by_policy(state) if not state.given_up else current.number
    verdict = judge_end(current, counted, max_attempts if not state.given_up else current.number, policy)
    if isinstance(verdict, TryAgain):
        return _again(state, current, verdict.reason)
    return Conclude(verdict)


def _requeue_steps(state: JobState, current: Attempt) -> list[Step] | None:
    """A confirmed ``requeue``: requeue the open object."""
    if state.requeue_wanted and _open_object(current):
        assert current.object_id is not None
        return [Requeue(current.number, current.object_id)]
    return None


def _hold_steps(state: JobState, current: Attempt) -> list[Step] | None:
    """A confirmed ``hold``: hold a released object that is still pending, and wait while it is held; an
    attempt created held stays held. None otherwise (a started object is judged as always; the release
    rule cannot apply to it either, as it is not held)."""
    if not state.hold_wanted:
        return None
    if _open_object(current) and current.order is AttemptState.RELEASED:
        if current.object_state is ObjectState.PENDING:
            assert current.object_id is not None
            return [Hold(current.number, current.object_id)]
        return [] if current.object_state is ObjectState.HELD else None
    if current.order is AttemptState.CONFIRMED:
        return []  # created held: it stays held
    return None


def _release_steps(state: JobState, current: Attempt) -> list[Step] | None:
    """A confirmed ``release``: release the object the user's hold held."""
    if (state.release_wanted and _open_object(current) and current.order is AttemptState.RELEASED
            and current.object_state is ObjectState.HELD):
        assert current.object_id is not None
        return [Release(current.number, current.object_id)]
    return None


def _user_steps(state: JobState, current: Attempt) -> list[Step] | None:
    """What the user's confirmed requests ask of the current attempt now (None: nothing of theirs).

    A cancel decides alone; the other requests are asked in order, and the first that decides wins."""
    if state.cancel_wanted:
        return _cancel_steps(current)
    for request_steps in (_resubmit_steps, _requeue_steps, _hold_steps, _release_steps):
        steps = request_steps(state, current)
        if steps is not None:
            return steps
    return None


def _next_for_current(state: JobState, current: Attempt, now: datetime, policy: Policy) -> list[Step]:
    spec = state.spec
    mine = _user_steps(state, current)
    if mine is not None:
        return mine
    if state.rerun_of == current.number:  # a failed, settled element the user resubmitted: run it again
        return [_resubmitted(state, current, f"attempt {current.number} failed; resubmitted by the user")]
    max_attempts = current.number if state.given_up else spec.max_attempts
    if current.order is AttemptState.REFUSED:
        why = f": {current.reason}" if current.reason else ""
        return [Conclude(JobOutcome(OutcomeKind.REFUSED, f"attempt {current.number} refused{why}"))]
    blocked = _blocking_escalation(state)
    if blocked is not None:
        return [Conclude(JobOutcome(OutcomeKind.ESCALATED, blocked))]
    if current.order is AttemptState.UNKNOWN and _escalated(state, EscalationReason.VANISHED, current.number):
        if current.number < max_attempts:
            return [_again(state, current, f"attempt {current.number}'s object never appeared")]
        return [Conclude(JobOutcome(OutcomeKind.ESCALATED,
                                 f"attempt {current.number}: no object appeared and no attempt is left"))]
    if current.ended:  # released and ended, or ended while held (cancelled by someone else): judged alike
        return [_judged(state, current, max_attempts, policy)]
    if current.order is AttemptState.CONFIRMED:
        assert current.object_id is not None
        return [Release(current.number, current.object_id)]
    return []


def plan(state: JobState, now: datetime, policy: Policy, sending: int | None = None, *,
         delivering: bool = False) -> list[Step]:
    """The steps to take now, in order. ``sending`` is the attempt whose create this process has in flight."""
    steps = _loose_ends(state, sending)
    if steps:
        return steps
    if state.abandoned:
        return _abandon(state)
    if state.outcome is None:
        return _before_outcome(state, now, policy)
    return _after_outcome(state, policy, delivering)


def _loose_ends(state: JobState, sending: int | None) -> list[Step]:
    """What is owed before any decision, whatever the job's state: a create whose sender is gone is marked
    unknown, a late object still held is stopped, a requeue whose answer never came is reported."""
    steps: list[Step] = [MarkUnknown(a.number) for a in state.attempts
                         if a.order is AttemptState.SUBMITTING and a.number != sending]
    steps += _late_held_objects(state)
    if state.requeue_in_flight is not None:
        steps.append(ReportUncertain(state.requeue_in_flight))
    return steps


def _late_held_objects(state: JobState) -> list[Step]:
    """An object that never started and never will be released (an old attempt's, or any after the
    outcome) is cancelled, once."""
    current = state.current
    steps: list[Step] = []
    for attempt in state.attempts:
        late = state.outcome is not None or attempt is not current
        if (late and attempt.has_object and attempt.order is not AttemptState.RELEASED
                and attempt.object_state is ObjectState.HELD and not attempt.cancelling):
            assert attempt.object_id is not None
            steps.append(Cancel(attempt.number, attempt.object_id))
    return steps


def _before_outcome(state: JobState, now: datetime, policy: Policy) -> list[Step]:
    """A job with no outcome yet: its first attempt (or, given up before it, its outcome), else what its
    current attempt asks for."""
    current = state.current
    if current is None:
        if state.given_up:
            return [Conclude(JobOutcome(OutcomeKind.CANCELLED if state.cancel_wanted else OutcomeKind.FAILED,
                                     "given up by the user before the first attempt"))]
        return [StartAttempt(1, "first attempt")]
    return _next_for_current(state, current, now, policy)


def _after_outcome(state: JobState, policy: Policy, delivering: bool) -> list[Step]:
    """A job with its outcome: its unknown attempts are dealt with by the residual policy, then the record
    settles once nothing is outstanding."""
    unknown = [a for a in state.attempts if a.order is AttemptState.UNKNOWN and not a.residual]
    if unknown and not state.settled:
        return _unknown_after_outcome(state, unknown, policy)
    if not state.settled and not outstanding(state, delivering=delivering):
        return [Settle()]
    return []


def _abandon(state: JobState) -> list[Step]:
    """Abandon: every attempt whose object may still exist goes to the residual list (a sweep stops its
    object if it never started), then the outcome, then the record settles."""
    open_attempts = [a for a in state.attempts if not a.residual and a.order is not AttemptState.REFUSED
                     and not a.ended and a.order is not AttemptState.SUBMITTING]
    if open_attempts:
        return [MoveToResidual(a.number, ResidualReason.ABANDONED) for a in open_attempts]
    if state.outcome is None:
        return [Conclude(JobOutcome(OutcomeKind.ABANDONED, "abandoned by the user; its objects are on the residual "
                                                        "list"))]
    return [] if state.settled else [Settle()]


def _unknown_after_outcome(state: JobState, unknown: list[Attempt], policy: Policy) -> list[Step]:
    """An unknown attempt does not hold a job with an outcome open under the default policy: it moves
    to the residual list. Under the manual policy it escalates once and the record waits."""
    if policy.residual is ResidualPolicy.LIST:
        return [MoveToResidual(a.number) for a in unknown]
    return [Escalate(EscalationReason.UNKNOWN_ATTEMPT, a.number,
                     f"attempt {a.number}: its create was never answered and its object never seen; "
                     f"`abandon` it to let the record settle")
            for a in unknown if not _escalated(state, EscalationReason.UNKNOWN_ATTEMPT, a.number)]

