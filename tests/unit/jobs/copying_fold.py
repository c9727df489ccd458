"""The fold as it was before it was made linear (main at f2b4cdb): a copy of the whole state per event.

Kept only as the oracle the linear fold is compared with (test_fold_equivalence.py), until that
comparison has run; it is not used by dunscaith.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

from domain.model.jobs import events as ev
from domain.model.jobs.objects import ObjectState
from domain.model.jobs.state import (
    Action,
    Attempt,
    AttemptState,
    Escalation,
    EscalationReason,
    JobOutcome,
    JobState,
    OutcomeKind,
    RecordInconsistent,
    Request,
)


def _with_attempt(state: JobState, attempt: Attempt) -> JobState:
    attempts = list(state.attempts)
    attempts[attempt.number - 1] = attempt
    return replace(state, attempts=tuple(attempts))


def _set(state: JobState, number: int, **changes: object) -> JobState:
    return _with_attempt(state, replace(state.attempt(number), **changes))  # type: ignore[arg-type]


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
        case ev.Refused(attempt=n):
            return _set(state, n, order=AttemptState.REFUSED)
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
            return _set(state, n, object_state=ObjectState(s), exit_code=code, signal=sig, reason=why,
                        absent_since=None)
        case ev.Absent(attempt=n):
            return _set(state, n, absent_since=at)
        case ev.Cancelling(attempt=n):
            return _set(state, n, cancelling=True)
        case ev.MovedToResidual(attempt=n):
            return _set(state, n, residual=True)
        case ev.Requested(request=rid, action=action):
            if state.request(rid) is not None:
                raise RecordInconsistent(f"request {rid} made twice")
            return replace(state, requests=(*state.requests, Request(rid, Action(action), at)))
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
            esc = Escalation(EscalationReason(reason), n, detail, at)
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
            return replace(state, outcome=JobOutcome(OutcomeKind(result), detail))
        case ev.Settled():
            return replace(state, settled=True)
        case ev.Pruned():
            if not state.settled:
                raise RecordInconsistent("pruned before the record settled")
            if state.pruned_at is not None:
                return state  # a second prune only repeats the first (its time stands)
            return replace(state, pruned_at=at)
    raise RecordInconsistent(f"unhandled event {event!r}")


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
