"""The supervision engine's decision (domain/model/jobs/engine.py): pure, for any set of jobs.

What it must keep: a job's answers before its steps, its steps those of ``sv.plan`` for the state its
answers leave, one query for every idle job whose query is due, nothing decided twice for a job whose
record already says it was done, a release that waits on something outside the job never taken, and a
wake never before ``now`` nor after the soonest job's own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from dunscaith.domain.model.jobs import engine as en
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import supervision as sv
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.polling import next_poll, poll_delay
from dunscaith.domain.model.jobs.record import StoreIdentity
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import JobState, apply, fold_events

T0 = datetime(2026, 12, 1, tzinfo=UTC)
PACING = en.Pacing.of(10.0, 160.0)
POLICY = Policy()


def recorded(name: str = "j") -> JobState:
    head = ev.JobRecorded.of(JobSpec(JobId(name), "local", "local", ("true",), None, None, 3),
                             StoreIdentity("memory", "here"))
    return fold_events([(T0, head)])


def after(state: JobState, *events: ev.Event) -> JobState:
    for event in events:
        state = apply(state, event, T0)
    return state


# a job at each point of its life, as the executor commits it
STORIES: list[tuple[ev.Event, ...]] = [
    (),
    (ev.Submitting(1, Nonce("n1")),),
    (ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("7")), ev.Confirmed(1, ObjectId("7"))),
    (ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("7")), ev.Confirmed(1, ObjectId("7")),
     ev.Released(1, ObjectId("7"), None, None)),
    (ev.Submitting(1, Nonce("n1")), ev.Unknown(1, "no reply")),
    (ev.Submitting(1, Nonce("n1")), ev.Refused(1, "no")),
    (ev.Requested("r1", "hold"),),
    (ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("7")), ev.Requested("r1", "cancel")),
]


def view(job: str, story: tuple[ev.Event, ...], **kw: object) -> en.JobView:
    return en.JobView(JobId(job), after(recorded(job), *story), **kw)  # type: ignore[arg-type]


def test_a_new_job_is_created_and_nothing_is_asked_meanwhile() -> None:
    decision = en.decide([view("a", ())], T0, POLICY, PACING)
    assert [type(a.step) for a in decision.actions if isinstance(a, en.TakeStep)] == [sv.StartAttempt]
    assert not any(isinstance(a, en.Ask) for a in decision.actions)
    assert decision.wake_at == T0


def test_a_confirmed_object_is_released() -> None:
    free = en.decide([view("a", STORIES[2])], T0, POLICY, PACING)
    assert [a.step for a in free.actions if isinstance(a, en.TakeStep)] == [sv.Release(1, ObjectId("7"))]


def test_a_job_whose_first_create_waits_is_not_created_and_not_asked_about() -> None:
    gated = en.decide([view("a", (), start_waits=True)], T0, POLICY, PACING)
    assert not any(isinstance(a, en.TakeStep) for a in gated.actions)
    # past its gate (an attempt recorded) it is any job: the gate is asked for the first create only
    past = en.decide([view("a", STORIES[2], start_waits=True)], T0, POLICY, PACING)
    assert [a.step for a in past.actions if isinstance(a, en.TakeStep)] == [sv.Release(1, ObjectId("7"))]


def test_a_request_is_answered_before_any_step_and_the_steps_follow_from_the_answer() -> None:
    decision = en.decide([view("a", STORIES[7])], T0, POLICY, PACING)
    kinds = [type(a) for a in decision.actions]
    assert kinds[0] is en.AnswerRequest
    answered = decision.actions[0]
    assert isinstance(answered, en.AnswerRequest) and answered.answer.request == "r1"
    # the answer confirmed a cancel: what the plan says for the state after it follows
    state = after(recorded("a"), *STORIES[7], answered.answer)
    planned = sv.plan(state, T0, POLICY)
    assert [a.step for a in decision.actions if isinstance(a, en.TakeStep)] == planned


def test_many_jobs_due_are_asked_in_one_query() -> None:
    released = STORIES[3]
    views = [view(f"e{i}", released) for i in range(5)]  # never asked: due at once
    decision = en.decide(views, T0, POLICY, PACING)
    asks = [a for a in decision.actions if isinstance(a, en.Ask)]
    assert asks == [en.Ask(tuple(JobId(f"e{i}") for i in range(5)))]


def test_a_job_asked_lately_sleeps_to_its_next_query() -> None:
    state = after(recorded("a"), *STORIES[3])
    asked = T0 + timedelta(seconds=3)
    v = en.JobView(JobId("a"), state, asked_at=asked, answered=True, quiet=2)
    due = next_poll(asked, poll_delay(2, asked - (state.updated_at or state.recorded_at), PACING.backoff))
    decision = en.decide([v], asked, POLICY, PACING)
    assert decision.actions == ()
    assert decision.wake_at == due
    assert en.decide([v], due, POLICY, PACING).actions == (en.Ask((JobId("a"),)),)


def test_a_command_makes_nothing_new_and_asks_nothing() -> None:
    decision = en.decide([view("a", (), commands_only=True)], T0, POLICY, PACING)
    assert decision.actions == ()


views_strategy = st.lists(
    st.tuples(st.sampled_from(range(len(STORIES))), st.booleans(), st.none() | st.integers(0, 600),
              st.booleans(), st.booleans(), st.integers(0, 12)),
    min_size=0, max_size=8)


@settings(max_examples=200, deadline=None)
@given(views_strategy, st.integers(0, 3600))
def test_the_decision_is_each_jobs_own_and_the_wake_is_never_late(
        drawn: list[tuple[int, bool, int | None, bool, bool, int]], later: int) -> None:
    now = T0 + timedelta(seconds=later)
    views = []
    for i, (story, waits, asked, answered, ask_now, quiet) in enumerate(drawn):
        views.append(en.JobView(JobId(f"j{i}"), after(recorded(f"j{i}"), *STORIES[story]),
                                asked_at=None if asked is None else min(now, T0 + timedelta(seconds=asked)),
                                answered=answered, ask_now=ask_now, quiet=quiet, start_waits=waits))
    decision = en.decide(views, now, POLICY, PACING)
    # the same as deciding on each job alone, in order, with the asks gathered into one
    alone = [en.decide([v], now, POLICY, PACING) for v in views]
    mine = [a for d in alone for a in d.actions if not isinstance(a, en.Ask)]
    asked_alone = [j for d in alone for a in d.actions if isinstance(a, en.Ask) for j in a.jobs]
    assert [a for a in decision.actions if not isinstance(a, en.Ask)] == mine
    asks = [a for a in decision.actions if isinstance(a, en.Ask)]
    assert len(asks) <= 1
    assert (list(asks[0].jobs) if asks else []) == asked_alone
    # a job with steps is not asked (its answer would predate what it does); a gated first create is never taken
    stepping = {a.job for a in mine}
    assert not stepping & set(asked_alone)
    for v in views:
        if v.start_waits:
            assert not any(isinstance(a, en.TakeStep) and a.job == v.job and isinstance(a.step, sv.StartAttempt)
                           and a.step.attempt == 1 for a in decision.actions)
    # the wake: now when anything is to be done, else the soonest job's own, never before now
    assert decision.wake_at >= now
    if decision.actions:
        assert decision.wake_at == now
    else:
        assert decision.wake_at == min((d.wake_at for d in alone), default=en.NEVER)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(range(len(STORIES))))
def test_what_the_record_says_was_done_is_not_decided_again(story: int) -> None:
    """Committing each decided event and deciding again never repeats a create: the record's submitting
    attempt is never started twice (the seed's rule, as far as the decision goes)."""
    state = after(recorded("a"), *STORIES[story])
    for _ in range(6):
        decision = en.decide([en.JobView(JobId("a"), state)], T0, POLICY, PACING)
        steps = [a.step for a in decision.actions if isinstance(a, en.TakeStep)]
        answers = [a.answer for a in decision.actions if isinstance(a, en.AnswerRequest)]
        state = after(state, *answers)
        starts = [s for s in steps if isinstance(s, sv.StartAttempt)]
        assert len(starts) <= 1
        if not starts:
            break
        n = starts[0].attempt
        assert n == len(state.attempts) + 1  # a new attempt, never one the record has
        state = after(state, ev.Submitting(n, Nonce(f"n{n}")), ev.Created(n, ObjectId(f"o{n}")),
                      ev.Confirmed(n, ObjectId(f"o{n}")), ev.Released(n, ObjectId(f"o{n}"), None, None),
                      ev.Observed(n, ObjectId(f"o{n}"), ObjectState.RUNNING.value, None, None, ""))
        again = en.decide([en.JobView(JobId("a"), state)], T0, POLICY, PACING)
        assert not any(isinstance(a, en.TakeStep) and isinstance(a.step, sv.StartAttempt) and a.step.attempt == n
                       for a in again.actions)


@settings(max_examples=200, deadline=None)
@given(st.booleans(), st.booleans(), st.booleans(), st.floats(0, 100), st.floats(0, 100))
def test_a_pass_steps_what_woke_or_is_new_and_carries_only_what_is_due(
        begun: bool, woke: bool, stopping: bool, now: float, due: float) -> None:
    chosen = en.turn(begun=begun, woke=woke, stopping=stopping, now=now, due=due)
    if stopping or not begun or woke:
        assert chosen is en.Turn.STEP  # a stop drains every loop; a woken or new one is never carried
    elif now + en.EARLY >= due:
        assert chosen is en.Turn.CARRY
    else:
        assert chosen is en.Turn.WAIT


@given(st.none() | st.integers(1, 5), st.integers(0, 3), st.integers(0, 8))
def test_max_running_bounds_only_fresh_jobs(bound: int | None, attempts: int, busy: int) -> None:
    assert en.may_start(bound, attempts, busy) == (bound is None or attempts > 0 or busy < bound)


@given(st.lists(st.floats(0, 1000), min_size=1, max_size=10), st.none() | st.floats(0, 1000), st.floats(0, 10))
def test_the_next_pass_is_the_soonest_of_the_loops_and_the_refresh(
        dues: list[float], refresh_in: float | None, now: float) -> None:
    due = en.next_pass(dues, refresh_in, now)
    assert due <= min(dues)
    assert due == min([*dues, *([] if refresh_in is None else [now + refresh_in])])


@given(st.floats(0, 1000), st.floats(0, 100), st.floats(0, 1000))
def test_a_loop_paced_by_the_pass_counts_its_pause_from_the_pass_and_one_alone_from_its_step(
        began: float, took: float, pause: float) -> None:
    now = began + took
    assert en.due_after(began, now, pause, paced=True) == began + pause  # the jobs of a pass keep one tick
    assert en.due_after(began, now, pause, paced=False) == now + pause  # a job alone: as its own loop paused


@given(st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_the_next_pass_follows_at_once_only_when_there_is_nothing_to_wait_for(
        stopping: bool, active: bool, must_step: bool, room: bool) -> None:
    at_once = en.again_at_once(stopping=stopping, active=active, must_step=must_step, room=room)
    assert at_once == (stopping or not active or must_step or room)
    if active and not (stopping or must_step or room):
        assert not at_once  # a job supervised, quiet: the loop waits for its time, a wake or a signal
