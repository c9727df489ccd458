"""``resubmit`` of a sweep's failed, settled element: a new attempt of the same element (issue 23).

Each row of what may and may not run again (``requests.rerun_refusal``, the one rule; the selection of
``resubmit NAME --failed`` from summaries, ``sweeps.resubmit_refusal``), then the whole story on fakes: the
command confirms it under the element's lock, and the supervisor makes the next attempt, never a second
object for the failed one."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.kinds import ANY_KIND
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.record import EventLine, JobRecord, StoreIdentity
from dunscaith.domain.model.jobs.requests import refusal, rerun_refusal
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import RERUN, Action, JobState, OutcomeKind, fold, label
from dunscaith.domain.model.jobs.summary import state_words
from dunscaith.domain.model.jobs.supervision import StartAttempt, plan
from dunscaith.domain.model.jobs.sweeps import SweepMember, resubmit_refusal
from dunscaith.domain.services.jobs.commands import Answer, Answerer, JobCommands
from dunscaith.domain.services.jobs.submit import RecordJob
from tests.expect import present
from tests.unit.jobs.helpers import NoCrash, StopAfter, rig

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
ELEMENT = JobSpec(JobId("exp-3"), "local", "fake", ("false",), max_attempts=1, member=SweepMember(JobId("exp"), 3))
SOLO = replace(ELEMENT, name=JobId("solo"), member=None)
WHERE = StoreIdentity("sqlite", "/r/db", None, 1, 2)
RAN: list[ev.Event] = [ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("o1")), ev.Confirmed(1, ObjectId("o1")),
       ev.Released(1, ObjectId("o1"), None, None), ev.Observed(1, ObjectId("o1"), "failed", 1, None, "")]


def _state(spec: JobSpec, *events: ev.Event) -> JobState:
    lines = [EventLine(seq, T0 + timedelta(seconds=seq), *ev.encode(e))
             for seq, e in enumerate([ev.JobRecorded.of(spec, WHERE), *events], start=1)]
    return fold(JobRecord(spec.name, tuple(lines)))


FAILED: list[ev.Event] = [*RAN, ev.OutcomeReached("failed", "failed, exit code 1"), ev.Settled()]


@pytest.mark.parametrize(("spec", "events", "says"), [
    (ELEMENT, FAILED, None),  # failed and settled: runs again
    (SOLO, FAILED, None),  # a job of its own that failed and settled runs again too (issue 39)
    (ELEMENT, [*RAN[:4], ev.Observed(1, ObjectId("o1"), "completed", 0, None, ""),
               ev.OutcomeReached("succeeded", "exit code 0"), ev.Settled()], "succeeded: not resubmitted"),
    (ELEMENT, [*RAN, ev.OutcomeReached("failed", "failed, exit code 1")], "has not settled"),
    (ELEMENT, [*RAN, ev.Submitting(2, Nonce("n2")), ev.Unknown(2, "no answer"),
               ev.OutcomeReached("failed", "failed, exit code 1")], "has not settled"),
    (ELEMENT, [ev.Submitting(1, Nonce("n1")), ev.Refused(1, "no partition"),
               ev.OutcomeReached("refused", "attempt 1 refused"), ev.Settled()], "refused: not resubmitted"),
    (ELEMENT, [*RAN, ev.OutcomeReached("escalated", "vanished"), ev.Settled()], "escalated: not resubmitted"),
    (ELEMENT, [*RAN[:4], ev.Requested("r", "cancel"), ev.Answered("r", "confirmed", ""),
               ev.Observed(1, ObjectId("o1"), "cancelled", None, None, ""),
               ev.OutcomeReached("cancelled", "cancelled by the user"), ev.Settled()], "cancelled: not resubmitted"),
    (ELEMENT, [*RAN[:4], ev.Requested("r", "cancel"), ev.Answered("r", "confirmed", ""), RAN[4],
               ev.OutcomeReached("failed", "failed, exit code 1"), ev.Settled()], "cancelled by the user"),
    (ELEMENT, [*FAILED, ev.Pruned()], "pruned"),
])
def test_what_may_and_may_not_run_again(spec: JobSpec, events: list[ev.Event], says: str | None) -> None:
    state = _state(spec, *events)
    found = refusal(state, Action.RESUBMIT, ANY_KIND)
    assert found == rerun_refusal(state)
    if says is None:
        assert found is None
    else:
        assert found is not None and says in found


def test_an_element_that_may_still_run_is_replaced_only_as_before_sweeps() -> None:
    running = _state(ELEMENT, *RAN[:4], ev.Observed(1, ObjectId("o1"), "running", None, None, ""))
    assert "only an object that has not started is replaced" in present(refusal(running, Action.RESUBMIT, ANY_KIND))
    for action in Action:  # every other request on a settled element is refused, as on any job
        if action is not Action.RESUBMIT:
            assert refusal(_state(ELEMENT, *FAILED), action, ANY_KIND) is not None


@pytest.mark.parametrize(("state", "outcome", "settled", "says"), [
    ("failed", "failed", True, None),
    ("succeeded", "succeeded", True, "succeeded: not resubmitted"),
    ("failed", "failed", False, "not settled"),
    ("running", None, False, "no outcome yet"),
    ("cancelled", "cancelled", True, "cancelled: not resubmitted"),
    ("escalated", "escalated", True, "escalated: not resubmitted"),
])
def test_the_selection_from_summaries_takes_the_failed_settled_elements(state: str, outcome: str | None,
                                                                       settled: bool, says: str | None) -> None:
    found = resubmit_refusal(state, outcome, settled)
    assert found is None if says is None else (found is not None and says in found)


def test_a_confirmed_resubmit_reopens_the_failed_element_and_the_plan_makes_the_next_attempt() -> None:
    state = _state(ELEMENT, *FAILED, ev.Requested("r", "resubmit"), ev.Answered("r", "confirmed", ""))
    assert (state.outcome, state.settled, state.rerun_of) == (None, False, 1)
    assert label(state) == RERUN and RERUN in state_words()
    assert present(state.current).object_state is not None  # the failed attempt stays as it ended
    assert plan(state, T0, Policy()) == [StartAttempt(2, "attempt 1 failed; resubmitted by the user")]
    assert snapshot.decode(snapshot.encode(state, 8), 8) == state
    again = _state(ELEMENT, *FAILED, ev.Requested("r", "resubmit"), ev.Answered("r", "confirmed", ""),
                   ev.Submitting(2, Nonce("n2")))
    assert label(again) == "submitting" and plan(again, T0, Policy(), sending=2) == []  # its create in flight


def test_resubmit_of_a_failed_element_runs_it_once_more_as_attempt_two() -> None:
    r = rig(exit_code=1)
    job = RecordJob(r.store, r.clock, NoCrash())(ELEMENT)
    r.run(job)
    assert present(r.state(job).outcome).kind is OutcomeKind.FAILED and r.state(job).settled
    r.scheduler._exit_code_of = lambda spec: 0  # the next run succeeds

    result = JobCommands(r.store, r.clock, NoCrash(), lambda: r.supervisor)(job, Action.RESUBMIT, StopAfter(r.clock))
    assert (result.answer, result.by) == (Answer.CONFIRMED, Answerer.THIS_COMMAND), result.detail
    assert "attempt 2 runs it again" in result.detail
    assert label(r.state(job)) == RERUN and len(r.state(job).attempts) == 1  # a command makes no attempt

    r.run(job)  # the supervisor (here: `supervise exp-3`) makes it
    state = r.state(job)
    assert [a.number for a in state.attempts] == [1, 2] and state.settled
    assert present(state.outcome).kind is OutcomeKind.SUCCEEDED
    assert r.scheduler.count("create_held") == 2  # one object per attempt: the failed one never sent again
    assert len({present(o.spec).nonce for o in r.scheduler.objects().values()}) == 2


def test_a_second_resubmit_of_an_element_that_succeeded_the_second_time_is_refused() -> None:
    r = rig(exit_code=1)
    job = RecordJob(r.store, r.clock, NoCrash())(ELEMENT)
    r.run(job)
    r.scheduler._exit_code_of = lambda spec: 0
    commands = JobCommands(r.store, r.clock, NoCrash(), lambda: r.supervisor)
    assert commands(job, Action.RESUBMIT, StopAfter(r.clock)).answer is Answer.CONFIRMED
    r.run(job)
    again = commands(job, Action.RESUBMIT, StopAfter(r.clock))
    assert again.answer is Answer.REFUSED and "succeeded: not resubmitted" in again.detail
