"""A job's state, folded from the events of its record. The record is the only truth; this is a view."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import TypeVar

from domain.model.jobs import events as ev
from domain.model.jobs.errors import JobsError
from domain.model.jobs.ids import JobId, Nonce, ObjectId
from domain.model.jobs.objects import ENDED, ObjectState
from domain.model.jobs.record import JobRecord
from domain.model.jobs.spec import JobSpec


class RecordInconsistent(JobsError, ValueError):
    """The events do not tell one story (an event about an attempt never started, a second outcome...)."""


_E = TypeVar("_E", bound=StrEnum)


class AttemptState(StrEnum):
    """One attempt is one order (DESIGN §2): it makes at most one object and is never sent twice."""

    SUBMITTING = "submitting"  # durable before the request; the request may or may not have gone out
    CREATED = "created"  # the scheduler gave an id; the object is held
    UNKNOWN = "unknown"  # no answer: an object may exist
    REFUSED = "refused"  # final: no object was made
    CONFIRMED = "confirmed"  # a query showed the object with our nonce is the one recorded
    RELEASED = "released"  # opened: the scheduler may start it


class OutcomeKind(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # the object ended otherwise, or recovery ran out of attempts
    REFUSED = "refused"  # the scheduler refused to make the object
    ESCALATED = "escalated"  # the policy could not decide; a person must
    CANCELLED = "cancelled"  # the user cancelled the job
    ABANDONED = "abandoned"  # the user let the job go: its objects are the residual list's


class Action(StrEnum):
    """What a job command asks of the job (docs/job-commands.md)."""

    HOLD = "hold"
    RELEASE = "release"
    CANCEL = "cancel"
    GIVE_UP = "give-up"
    ABANDON = "abandon"
    REQUEUE = "requeue"
    RESUBMIT = "resubmit"


@dataclass(frozen=True, slots=True)
class Request:
    id: str
    action: Action
    at: datetime
    result: str | None = None  # "confirmed" | "refused"; None while unanswered
    detail: str = ""


class EscalationReason(StrEnum):
    VANISHED = "vanished"  # absent from every complete query for longer than the deadline
    MISMATCH = "mismatch"  # the object with our nonce has another id than the one recorded
    DUPLICATE = "duplicate"  # two objects carry one attempt's nonce
    UNKNOWN_ATTEMPT = "unknown-attempt"  # the manual residual policy: an unknown attempt waits for the user


@dataclass(frozen=True, slots=True)
class Attempt:
    number: int
    nonce: Nonce
    order: AttemptState
    object_id: ObjectId | None = None
    object_state: ObjectState | None = None
    exit_code: int | None = None
    signal: int | None = None
    reason: str = ""
    absent_since: datetime | None = None
    cancelling: bool = False
    residual: bool = False  # moved to the residual list: sweeps look after its object now

    @property
    def ended(self) -> bool:
        return self.object_state in ENDED

    @property
    def has_object(self) -> bool:
        return self.object_id is not None


@dataclass(frozen=True, slots=True)
class JobOutcome:
    kind: OutcomeKind
    detail: str


@dataclass(frozen=True, slots=True)
class Escalation:
    reason: EscalationReason
    attempt: int | None
    detail: str
    at: datetime
    delivered: bool = False  # passed to the configured escalation command


@dataclass(frozen=True, slots=True)
class JobState:
    spec: JobSpec
    host: str
    recorded_at: datetime
    attempts: tuple[Attempt, ...] = ()
    outcome: JobOutcome | None = None
    escalations: tuple[Escalation, ...] = ()
    settled: bool = False
    updated_at: datetime | None = None
    requests: tuple[Request, ...] = ()
    # what confirmed requests made the job's own; the plan carries them out
    hold_wanted: bool = False  # keep the current object held (release it no more)
    release_wanted: bool = False  # release the current object again (a user hold ends)
    cancel_wanted: bool = False  # stop the current object and make no new attempt
    given_up: bool = False  # make no new attempt: the current attempt's end is the outcome
    abandoned: bool = False  # let the job go: its open attempts move to the residual list
    requeue_wanted: bool = False  # put the current (started) object back in the queue, once
    resubmit_of: int | None = None  # replace this attempt (not started) by a new one
    requeue_in_flight: int | None = None  # the attempt whose requeue was committed but not its answer
    failures: tuple[str, ...] = ()  # confirmed actions that were not carried out, and why
    pruned_at: datetime | None = None  # pruned by the user: off ``list``, on the residual list

    def request(self, request_id: str) -> Request | None:
        return next((r for r in self.requests if r.id == request_id), None)

    @property
    def unanswered(self) -> list[Request]:
        return [r for r in self.requests if r.result is None]

    @property
    def name(self) -> JobId:
        return self.spec.name

    @property
    def current(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    def attempt(self, number: int) -> Attempt:
        if not 1 <= number <= len(self.attempts):
            raise RecordInconsistent(f"event about attempt {number}, which was never started")
        return self.attempts[number - 1]

    def with_attempt(self, attempt: Attempt) -> JobState:
        attempts = list(self.attempts)
        attempts[attempt.number - 1] = attempt
        return replace(self, attempts=tuple(attempts))

    def by_nonce(self, nonce: Nonce | None) -> Attempt | None:
        return next((a for a in self.attempts if nonce is not None and a.nonce == nonce), None)


def _set(state: JobState, number: int, **changes: object) -> JobState:
    return state.with_attempt(replace(state.attempt(number), **changes))  # type: ignore[arg-type]


def _intent(state: JobState, action: Action) -> JobState:
    """A confirmed request becomes the job's own intent, which the plan then carries out."""
    match action:
        case Action.HOLD:
            return replace(state, hold_wanted=True, release_wanted=False)
        case Action.RELEASE:
            return replace(state, hold_wanted=False, release_wanted=True)
        case Action.CANCEL:
            return replace(state, cancel_wanted=True, given_up=True, hold_wanted=False)
        case Action.GIVE_UP:
            return replace(state, given_up=True)
        case Action.ABANDON:
            return replace(state, abandoned=True, given_up=True)
        case Action.REQUEUE:
            return replace(state, requeue_wanted=True)
        case Action.RESUBMIT:
            return replace(state, resubmit_of=state.current.number if state.current else None)
    raise RecordInconsistent(f"unhandled action {action!r}")


def apply(state: JobState, event: ev.Event, at: datetime) -> JobState:
    """One event onto the state: the transition table of the record, in one place."""
    state = replace(state, updated_at=at)
    match event:
        case ev.JobRecorded():
            raise RecordInconsistent("a second job-recorded event")
        case ev.Submitting(attempt=n, nonce=nonce):
            if n != len(state.attempts) + 1:
                raise RecordInconsistent(f"attempt {n} started after attempt {len(state.attempts)}")
            return replace(state, attempts=(*state.attempts, Attempt(n, nonce, AttemptState.SUBMITTING)))
        case ev.Created(attempt=n, object_id=oid):
            return _set(state, n, order=AttemptState.CREATED, object_id=oid, object_state=ObjectState.HELD)
        case ev.Refused(attempt=n, detail=why):
            return _set(state, n, order=AttemptState.REFUSED, reason=why)
        case ev.Unknown(attempt=n):
            return _set(state, n, order=AttemptState.UNKNOWN)
        case ev.Found(attempt=n, object_id=oid):
            return _set(state, n, order=AttemptState.CREATED, object_id=oid, object_state=ObjectState.HELD,
                        absent_since=None)
        case ev.Confirmed(attempt=n, object_id=oid):
            return _set(state, n, order=AttemptState.CONFIRMED, object_id=oid)
        case ev.Released(attempt=n, object_id=oid):
            held = state.attempt(n).object_state in (None, ObjectState.HELD)
            state = replace(state, release_wanted=False)
            return _set(state, n, order=AttemptState.RELEASED, object_id=oid,
                        object_state=ObjectState.PENDING if held else state.attempt(n).object_state)
        case ev.Observed(attempt=n, state=s, exit_code=code, signal=sig, reason=why):
            return _set(state, n, object_state=_member(ObjectState, s, "observed"), exit_code=code, signal=sig,
                        reason=why, absent_since=None)
        case ev.Absent(attempt=n):
            return _set(state, n, absent_since=at)
        case ev.Cancelling(attempt=n):
            return _set(state, n, cancelling=True)
        case ev.MovedToResidual(attempt=n):
            return _set(state, n, residual=True)
        case ev.Requested(request=rid, action=action):
            if state.request(rid) is not None:
                raise RecordInconsistent(f"request {rid} made twice")
            return replace(state, requests=(*state.requests, Request(rid, _member(Action, action, "request"), at)))
        case ev.Answered(request=rid, result=result, detail=detail):
            req = state.request(rid)
            if req is None:
                raise RecordInconsistent(f"an answer to request {rid}, which was never made")
            if req.result is not None:
                raise RecordInconsistent(f"request {rid} answered twice")
            answered = replace(req, result=result, detail=detail)
            state = replace(state, requests=tuple(answered if r.id == rid else r for r in state.requests))
            return _intent(state, req.action) if result == "confirmed" else state
        case ev.HeldByUser(attempt=n, object_id=oid):
            return _set(state, n, object_id=oid, object_state=ObjectState.HELD)
        case ev.Requeueing(attempt=n):
            state.attempt(n)
            return replace(state, requeue_wanted=False, requeue_in_flight=n)
        case ev.Requeued(attempt=n):
            state = replace(state, requeue_in_flight=None)
            return _set(state, n, object_state=ObjectState.REQUEUED, exit_code=None, signal=None, reason="requeued")
        case ev.ActionFailed(action=action, detail=detail):
            state = replace(state, failures=(*state.failures, f"{action}: {detail}"))
            if action == Action.HOLD:
                return replace(state, hold_wanted=False)
            if action == Action.REQUEUE:
                return replace(state, requeue_wanted=False, requeue_in_flight=None)
            return state
        case ev.Escalated(reason=reason, attempt=n, detail=detail):
            esc = Escalation(_member(EscalationReason, reason, "escalated"), n, detail, at)
            return replace(state, escalations=(*state.escalations, esc))
        case ev.Delivered(index=i):
            if not 0 <= i < len(state.escalations):
                raise RecordInconsistent(f"delivery of escalation {i}, which was never raised")
            escalations = list(state.escalations)
            escalations[i] = replace(escalations[i], delivered=True)
            return replace(state, escalations=tuple(escalations))
        case ev.OutcomeReached(result=result, detail=detail):
            if state.outcome is not None:
                raise RecordInconsistent("a second outcome")
            return replace(state, outcome=JobOutcome(_member(OutcomeKind, result, "outcome"), detail))
        case ev.Settled():
            return replace(state, settled=True)
        case ev.Pruned():
            if not state.settled:
                raise RecordInconsistent("pruned before the record settled")
            if state.pruned_at is not None:
                return state  # a second prune only repeats the first (its time stands)
            return replace(state, pruned_at=at)
    raise RecordInconsistent(f"unhandled event {event!r}")


def _member(kind: type[_E], value: str, event: str) -> _E:
    try:
        return kind(value)
    except ValueError:
        raise RecordInconsistent(f"event {event}: {value!r} is no {kind.__name__} this build knows") from None


def fold_events(lines: Iterable[tuple[datetime, ev.Event]]) -> JobState:
    items = iter(lines)
    first = next(items, None)
    if first is None or not isinstance(first[1], ev.JobRecorded):
        raise RecordInconsistent("the record does not start with job-recorded")
    at, head = first
    assert isinstance(head, ev.JobRecorded)
    state = JobState(spec=head.spec(), host=head.host, recorded_at=at, updated_at=at)
    for at, event in items:
        state = apply(state, event, at)
    return state


def fold(record: JobRecord) -> JobState:
    """The state a record tells; EventUndecodable or RecordInconsistent (both JobsError) when it does not read."""
    return fold_events((line.at, ev.decode(line.kind, line.data)) for line in record.events)


def label(state: JobState) -> str:
    """One word for where the job is, for status lines and the pointer (display only)."""
    if state.outcome is not None:
        return str(state.outcome.kind)
    current = state.current
    if current is None:
        return "recorded"
    if current.order in (AttemptState.CREATED, AttemptState.CONFIRMED) or current.object_state is ObjectState.HELD:
        return "held"
    if current.order is AttemptState.RELEASED:
        return str(current.object_state or ObjectState.PENDING)
    return str(current.order)
