"""Whether a job command's request can be confirmed: one table, used by a live supervisor and by a
command that holds the job's lock alike, so the answer never depends on who gives it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.kinds import SchedulerCapabilities
from dunscaith.domain.model.jobs.objects import NOT_STARTED, ObjectState
from dunscaith.domain.model.jobs.state import Action, AttemptState, JobState, OutcomeKind

CONFIRMED = "confirmed"
REFUSED = "refused"

CARRIED_OUT = "carried out"
FAILED = "failed"

# the events that show a confirmed action reached the scheduler (or needed no scheduler at all)
_DONE: dict[Action, tuple[type[ev.Event], ...]] = {
    Action.HOLD: (ev.HeldByUser,),
    Action.RELEASE: (ev.Released,),
    Action.CANCEL: (ev.Cancelling, ev.OutcomeReached),
    Action.REQUEUE: (ev.Requeued,),
    Action.RESUBMIT: (ev.Cancelling, ev.Submitting),
    Action.ABANDON: (ev.MovedToResidual, ev.OutcomeReached, ev.Settled),
    Action.GIVE_UP: (),
}


def rerun_refusal(state: JobState) -> str | None:
    """Why ``resubmit`` cannot run a job that has its outcome again, or None when it can: the one rule.

    Only a job (or a sweep's element, ``resubmit NAME --failed``) that failed and settled is run again: as
    a new attempt of the same job, its failed attempts kept as they ended (``resubmit JOB --memory 8G``
    gives the new one other needs). Never one that succeeded (its result stands), never one that may still
    run (no outcome, or not settled: an object of unknown fate), never one a person decided on (cancelled,
    abandoned, escalated) or the scheduler refused, and never a pruned one (let go for good)."""
    outcome = state.outcome
    if outcome is None:
        return None  # no outcome: ``refusal``'s own table (replace an object that has not started)
    if outcome.kind is not OutcomeKind.FAILED:
        what = "element" if state.spec.member is not None else "job"
        return f"{state.name} {outcome.kind}: not resubmitted (only a failed {what} is run again)"
    if not state.settled:
        return f"{state.name} failed but has not settled: an object of it may still run"
    if state.pruned_at is not None:
        return f"{state.name} was pruned: let go for good"
    if state.cancel_wanted or state.abandoned:
        return f"{state.name} was cancelled by the user before it failed: not run again"
    if state.requeue_in_flight is not None:
        return f"{state.name}: a requeue's answer is not known"
    return None


def _hold_refusal(state: JobState) -> str | None:
    """``hold``: not while a cancel is wanted, and only an object that has not started."""
    current = state.current
    if state.cancel_wanted:
        return f"job {state.name} is being cancelled"
    if current is not None and current.object_state is not None and current.object_state not in NOT_STARTED:
        return (f"attempt {current.number}'s object {current.object_id} is {current.object_state}; "
                "only an object that has not started can be held")
    return None


def _release_refusal(state: JobState) -> str | None:
    """``release``: only a hold of the user's own is released."""
    if not state.hold_wanted:
        return f"job {state.name} is not held by a hold of yours; nothing to release"
    return None


def _no_refusal(state: JobState) -> str | None:
    """``cancel`` and ``give-up``: nothing more to refuse once the job is open."""
    return None


def _resubmit_refusal(state: JobState) -> str | None:
    """``resubmit`` of a job with no outcome: one request at a time, and only an attempt whose object
    has not started (or has ended) is replaced."""
    current = state.current
    if state.cancel_wanted or state.resubmit_of is not None:
        return f"job {state.name} is being cancelled or resubmitted already"
    if current is None or current.order is AttemptState.SUBMITTING:
        return f"job {state.name} has no attempt to replace yet"
    if current.object_state is not None and current.object_state not in NOT_STARTED and not current.ended:
        return (f"attempt {current.number}'s object {current.object_id} is {current.object_state}; only an "
                "object that has not started is replaced (cancel or requeue a running one)")
    return None


def _requeue_refusal(state: JobState) -> str | None:
    """``requeue``: one request at a time, and only a started object that has not ended."""
    current = state.current
    if state.cancel_wanted or state.requeue_wanted or state.requeue_in_flight is not None:
        return f"job {state.name} is being cancelled or requeued already"
    started = current is not None and current.object_state is not None and (
        current.object_state not in NOT_STARTED and current.object_state is not ObjectState.REQUEUED)
    if current is None or not started or current.ended:
        what = "no object" if current is None or current.object_state is None else current.object_state
        return f"only a started object that has not ended can be requeued (the current one: {what})"
    return None


# each action's own rule, asked once the rules common to every action have let it through
_ACTION_REFUSALS: dict[Action, Callable[[JobState], str | None]] = {
    Action.HOLD: _hold_refusal,
    Action.RELEASE: _release_refusal,
    Action.CANCEL: _no_refusal,
    Action.GIVE_UP: _no_refusal,
    Action.RESUBMIT: _resubmit_refusal,
    Action.REQUEUE: _requeue_refusal,
}


def refusal(state: JobState, action: Action, kind: SchedulerCapabilities) -> str | None:
    """Why ``action`` cannot be confirmed on ``state`` now, or None when it can (``kind``: what the job's
    scheduler kind declared it cannot do at all)."""
    if action is Action.RESUBMIT and state.outcome is not None:
        return rerun_refusal(state)
    if state.settled:
        return f"job {state.name} is settled (outcome: {state.outcome.kind if state.outcome else 'none'})"
    if action is Action.ABANDON:
        return None
    if state.outcome is not None:
        return f"job {state.name} already has its outcome ({state.outcome.kind})"
    if state.abandoned:
        return f"job {state.name} is being abandoned"
    unsupported = kind.refuses(action)
    if unsupported is not None:
        return unsupported
    action_refusal = _ACTION_REFUSALS.get(action)
    if action_refusal is None:
        return f"unknown action {action}"
    return action_refusal(state)


def confirmation(state: JobState, action: Action) -> str:
    """What a confirmed action will do, for the answer's detail."""
    current = state.current
    obj = f"object {current.object_id}" if current is not None and current.object_id else "its object"
    if action is Action.RESUBMIT and state.outcome is not None:
        number = current.number if current is not None else 0
        return (f"attempt {number} failed: the outcome is withdrawn and attempt {number + 1} runs it again "
                "(made by its supervisor)")
    return {
        Action.HOLD: f"{obj} is held, and stays held until `release`",
        Action.RELEASE: f"{obj} is released",
        Action.CANCEL: f"{obj} is stopping (running or not) and no new attempt is made",
        Action.GIVE_UP: "no new attempt is made: the current attempt's end is the outcome",
        Action.ABANDON: "the record lets the job go: its open attempts move to the residual list",
        Action.REQUEUE: f"{obj} goes back to the queue, once",
        Action.RESUBMIT: f"{obj} is cancelled before it starts and a new attempt replaces it",
    }[action]


def carried_out(action: Action, at_answer: JobState, later: Sequence[ev.Event]) -> tuple[str, str] | None:
    """What became of a confirmed action, from the state when it was confirmed and the events committed
    after its answer: (CARRIED_OUT | FAILED, detail), or None while it is not done yet."""
    for event in later:
        if isinstance(event, ev.ActionFailed) and event.action == str(action):
            return FAILED, event.detail
        if isinstance(event, _DONE[action]):
            return CARRIED_OUT, ""
    if action is Action.GIVE_UP:
        return CARRIED_OUT, ""  # the record's intent is the whole action
    current = at_answer.current
    if action is Action.HOLD and (current is None or current.order is not AttemptState.RELEASED
                                  or current.object_state is ObjectState.HELD):
        return CARRIED_OUT, ""  # never released (or held already): it stays held, nothing to ask
    return None
