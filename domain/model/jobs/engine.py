"""The supervision engine's decision: for any set of jobs, what to do now and when to look again.

Pure: each job's snapshot (``JobView``: its state and what its executor knows of the scheduler's last
answer), the time and the settings in; the actions to take, in order, and the moment to wake out. The
executor (``domain/services/jobs/supervise.py``) performs each action through the ports, commits its
event before the next request, and asks again; a job and a sweep's elements are decided by the same
function, and one more condition on a release (a pipeline step waiting on other jobs' outcomes) is one
more field of the snapshot (``start_waits``: what ``dependencies.readiness`` says of a job that waits, the
pipeline's gate on its first create), not another loop.

The order for one job is the order a supervisor always kept: each user request answered (its answer is
applied to the state before anything is planned on it), then the steps ``sv.plan`` gives for that state,
then, when its query is due, one batched query for every job whose query is due.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import supervision as sv
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.kinds import ANY_KIND, SchedulerCapabilities
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.polling import PollBackoff, next_poll, poll_delay
from dunscaith.domain.model.jobs.requests import CONFIRMED, REFUSED, confirmation, refusal
from dunscaith.domain.model.jobs.state import JobState, apply

NEVER = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Pacing:
    """How often the engine asks: ``poll`` the tick the record is read on (without a watch of appends), the
    polls backing off from ``backoff.first`` after a change to the interval of the job's age."""

    poll: timedelta
    backoff: PollBackoff

    @classmethod
    def of(cls, poll: float, poll_max: float) -> Pacing:
        """From the settings' seconds (``supervise.poll``, ``supervise.poll_max``); a poll of 0 asks every time."""
        base = timedelta(seconds=max(poll, 1e-6))
        cap = max(base, timedelta(seconds=poll_max))
        return cls(timedelta(seconds=max(poll, 0.0)), PollBackoff(base=base, cap=cap))


@dataclass(frozen=True, slots=True)
class JobView:
    """One job as the engine decides on it."""

    job: JobId
    state: JobState
    sending: int | None = None  # the attempt whose create is decided and not yet sent (its event not yet durable)
    asked_at: datetime | None = None  # when the scheduler was last asked about it
    answered: bool = False  # whether that question was answered whole
    ask_now: bool = False  # an object changed, or the answer was older than an action: ask at once
    quiet: int = 0  # answered queries since the record last changed
    kind: SchedulerCapabilities = ANY_KIND  # what its scheduler kind declares it cannot do
    commands_only: bool = False  # a command holding the lock: nothing new is made, a release only if asked for
    start_waits: bool = False  # its first create waits for other jobs (``dependencies.readiness`` not Ready)


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """Commit the answer to a user's request."""

    job: JobId
    answer: ev.Answered


@dataclass(frozen=True, slots=True)
class TakeStep:
    """Perform one step of ``sv.plan`` (a create, a release, a cancel, ...) and commit what it brought."""

    job: JobId
    step: sv.Step


@dataclass(frozen=True, slots=True)
class Ask:
    """One batched query of the scheduler for these jobs."""

    jobs: tuple[JobId, ...]


Action = AnswerRequest | TakeStep | Ask


@dataclass(frozen=True, slots=True)
class Decision:
    actions: tuple[Action, ...]
    wake_at: datetime  # when to decide again if nothing wakes the engine before
    idle: frozenset[JobId] = field(default_factory=frozenset)  # jobs with nothing to answer or step now


def answers(state: JobState, kind: SchedulerCapabilities = ANY_KIND) -> list[ev.Answered]:
    """Each unanswered request's answer: refused with why, or confirmed with what it will do."""
    out: list[ev.Answered] = []
    for req in state.unanswered:
        reason = refusal(state, req.action, kind)
        out.append(ev.Answered(req.id, REFUSED, reason) if reason is not None
                   else ev.Answered(req.id, CONFIRMED, confirmation(state, req.action)))
    return out


def steps(view: JobView, now: datetime, policy: Policy, *, delivering: bool = False) -> list[sv.Step]:
    """The steps ``sv.plan`` gives for the job's state, less those its snapshot rules out: a command makes
    nothing new and releases only what the user asked to; a job whose first create waits for other jobs (a
    pipeline's step, ``submit --after``) is not created yet: it stays recorded, nothing is sent or asked.
    Past its first attempt it is past its gate (a recovery attempt never asks its dependencies again)."""
    planned = sv.plan(view.state, now, policy, view.sending, delivering=delivering)
    if view.commands_only:
        planned = [st for st in planned if not isinstance(st, sv.StartAttempt)
                   and not (isinstance(st, sv.Release) and not view.state.release_wanted)]
    if view.start_waits:
        planned = [st for st in planned if not (isinstance(st, sv.StartAttempt) and st.attempt == 1)]
    return planned


def next_query(view: JobView, pacing: Pacing) -> datetime:
    """When the job's next query is due, after its last one: short after a change (doubling from
    ``backoff.first``), then the interval of the time since the job last changed, on ticks since the epoch."""
    asked = view.asked_at
    if asked is None:
        return datetime.min.replace(tzinfo=UTC)
    since = view.state.updated_at or view.state.recorded_at
    return next_poll(asked, poll_delay(view.quiet, asked - since, pacing.backoff))


def query_due(view: JobView, now: datetime, pacing: Pacing, at: datetime | None = None) -> bool:
    """Whether the job is asked about now (``at``: its ``next_query`` when the caller has it already)."""
    if view.asked_at is None or not view.answered or view.ask_now or pacing.poll <= timedelta(0):
        return True
    return now >= (next_query(view, pacing) if at is None else at)


def wake_at(view: JobView, now: datetime, pacing: Pacing, *, to_query: bool = False,
            at: datetime | None = None) -> datetime:
    """When the job's loop next wakes: its next query; unless ``to_query`` (appends wake it and all is
    well), no later than the next ``poll`` tick, so the record is read for requests that often. An answer
    older than the last action is asked for again soon."""
    if pacing.poll <= timedelta(0):
        return now
    tick = next_poll(now, pacing.poll)
    if view.asked_at is not None and not view.answered and view.ask_now:
        tick = min(tick, now + pacing.backoff.first)
    elif view.asked_at is not None and view.answered:
        due = next_query(view, pacing) if at is None else at
        tick = due if to_query else min(tick, due)
    return max(tick, now)


def _one(view: JobView, now: datetime, policy: Policy, delivering: bool) -> list[Action]:
    state = view.state
    acts: list[Action] = []
    for answer in answers(state, view.kind):
        acts.append(AnswerRequest(view.job, answer))
        state = apply(state, answer, now)
    if acts:
        view = _with_state(view, state)
    acts.extend(TakeStep(view.job, st) for st in steps(view, now, policy, delivering=delivering))
    return acts


def _with_state(view: JobView, state: JobState) -> JobView:
    return JobView(view.job, state, view.sending, view.asked_at, view.answered, view.ask_now, view.quiet,
                   view.kind, view.commands_only, view.start_waits)


def decide(views: Sequence[JobView], now: datetime, policy: Policy, pacing: Pacing, *,
           delivering: bool = False) -> Decision:
    """What to do now for every job in ``views``, and when to wake next.

    Each job's answers and steps come first, in the order of ``views``; then one ``Ask`` for every job
    whose query is due and that has nothing to step (a job stepped now is asked at its next decision, once
    what it did is committed: an answer asked before an action says nothing of it). The wake is the
    soonest of every job's (``wake_at``); ``now`` when there is anything to do."""
    actions: list[Action] = []
    idle: set[JobId] = set()
    asked: list[JobId] = []
    wake = NEVER
    for view in views:
        mine = _one(view, now, policy, delivering)
        actions.extend(mine)
        if mine:
            wake = now
            continue
        idle.add(view.job)
        if not view.commands_only and query_due(view, now, pacing):
            asked.append(view.job)
        else:
            wake = min(wake, wake_at(view, now, pacing, to_query=True))
    if asked:
        actions.append(Ask(tuple(asked)))
        wake = now
    return Decision(tuple(actions), wake, frozenset(idle))


def soonest(times: Iterable[datetime | None], default: datetime = NEVER) -> datetime:
    """The earliest of ``times`` (None: not due)."""
    return min((t for t in times if t is not None), default=default)


# ---------------------------------------------------------------------- the pass loop: one job's loop or many

EARLY = 0.001  # seconds: a due time computed as a sum of floats may fall a rounding error after the wait for it


class Turn(StrEnum):
    """What a pass over the jobs' loops (one job's, or a sweep's) does with one of them."""

    WAIT = "wait"  # not its time, nothing told of it
    CARRY = "carry"  # its time came with nothing told of it: carried on if its step would do nothing, else stepped
    STEP = "step"  # stepped: it is not begun, it woke, or the pass stops (every loop drains)


def turn(*, begun: bool, woke: bool, stopping: bool, now: float, due: float) -> Turn:
    """One loop's turn in a pass at ``now`` (monotonic), its own time being ``due``."""
    if stopping or not begun or woke:
        return Turn.STEP
    return Turn.CARRY if now + EARLY >= due else Turn.WAIT


def may_start(bound: int | None, attempts: int, busy: int) -> bool:
    """Whether one more job of a sweep may be started: its --max-running (``bound``) counts the sweep's
    supervised jobs without an outcome (``busy``). A job with attempts already (it may be running: it is
    watched whatever the bound) always may."""
    return bound is None or attempts > 0 or busy < bound


def next_pass(dues: Iterable[float], refresh_in: float | None, now: float) -> float:
    """When the next pass is due (monotonic): the soonest loop's time, or a refresh ``refresh_in`` seconds
    from ``now`` when that is sooner."""
    due = min(dues)
    return due if refresh_in is None else min(due, now + refresh_in)


def due_after(pass_began: float, now: float, pause: float, *, paced: bool) -> float:
    """When a loop stepped in a pass means to run again (monotonic), its step having asked for ``pause``
    seconds: counted from the pass's start when the pass paces it (its polls timed from that moment, so the
    jobs of one pass keep asking on the same ticks), else from ``now``, as the step ended (one job alone)."""
    return (pass_began if paced else now) + pause


def again_at_once(*, stopping: bool, active: bool, must_step: bool, room: bool) -> bool:
    """Whether the next pass follows at once, without a wait: the loop stops (every job steps to its drain),
    no job is supervised (whether one may start is looked at at once), one must step (a beat failed), or
    one more job may start."""
    return stopping or not active or must_step or room
