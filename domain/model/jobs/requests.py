"""Whether a job command's request can be confirmed: one table, used by a live supervisor and by a
command that holds the job's lock alike, so the answer never depends on who gives it."""

from __future__ import annotations

from domain.model.jobs.objects import NOT_STARTED, ObjectState
from domain.model.jobs.state import Action, AttemptState, JobState

CONFIRMED = "confirmed"
REFUSED = "refused"


def refusal(state: JobState, action: Action) -> str | None:
    """Why ``action`` cannot be confirmed on ``state`` now, or None when it can."""
    if state.settled:
        return f"job {state.name} is settled (outcome: {state.outcome.kind if state.outcome else 'none'})"
    if action is Action.ABANDON:
        return None
    if state.outcome is not None:
        return f"job {state.name} already has its outcome ({state.outcome.kind})"
    if state.abandoned:
        return f"job {state.name} is being abandoned"
    current = state.current
    match action:
        case Action.HOLD:
            if state.cancel_wanted:
                return f"job {state.name} is being cancelled"
            if current is not None and current.object_state is not None and current.object_state not in NOT_STARTED:
                return (f"attempt {current.number}'s object {current.object_id} is {current.object_state}; "
                        "only an object that has not started can be held")
            return None
        case Action.RELEASE:
            if not state.hold_wanted:
                return f"job {state.name} is not held by a hold of yours; nothing to release"
            return None
        case Action.CANCEL | Action.GIVE_UP:
            return None
        case Action.RESUBMIT:
            if state.cancel_wanted or state.resubmit_of is not None:
                return f"job {state.name} is being cancelled or resubmitted already"
            if current is None or current.order is AttemptState.SUBMITTING:
                return f"job {state.name} has no attempt to replace yet"
            if current.object_state is not None and current.object_state not in NOT_STARTED and not current.ended:
                return (f"attempt {current.number}'s object {current.object_id} is {current.object_state}; only an "
                        "object that has not started is replaced (cancel or requeue a running one)")
            return None
        case Action.REQUEUE:
            if state.cancel_wanted or state.requeue_wanted or state.requeue_in_flight is not None:
                return f"job {state.name} is being cancelled or requeued already"
            started = current is not None and current.object_state is not None and (
                current.object_state not in NOT_STARTED and current.object_state is not ObjectState.REQUEUED)
            if current is None or not started or current.ended:
                what = "no object" if current is None or current.object_state is None else current.object_state
                return f"only a started object that has not ended can be requeued (the current one: {what})"
            return None
    return f"unknown action {action}"


def confirmation(state: JobState, action: Action) -> str:
    """What a confirmed action will do, for the answer's detail."""
    current = state.current
    obj = f"object {current.object_id}" if current is not None and current.object_id else "its object"
    return {
        Action.HOLD: f"{obj} is held, and stays held until `release`",
        Action.RELEASE: f"{obj} is released",
        Action.CANCEL: f"{obj} is stopped (running or not) and no new attempt is made",
        Action.GIVE_UP: "no new attempt is made: the current attempt's end is the outcome",
        Action.ABANDON: "the record lets the job go: its open attempts move to the residual list",
        Action.REQUEUE: f"{obj} goes back to the queue, once",
        Action.RESUBMIT: f"{obj} is cancelled before it starts and a new attempt replaces it",
    }[action]
