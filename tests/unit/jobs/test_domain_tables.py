"""The pure rules, one row per case: recovery policy, exit codes, observation, plan, fold, encoding."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import supervision as sv
from dunscaith.domain.model.jobs.exit_codes import ExitCode, for_outcome, for_signal
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectState, ObjectView, QueryResult
from dunscaith.domain.model.jobs.policy import Policy, TryAgain, judge_end
from dunscaith.domain.model.jobs.record import StoreIdentity
from dunscaith.domain.model.jobs.residual import ResidualPolicy
from dunscaith.domain.model.jobs.settlement import outstanding
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.domain.model.jobs.state import (
    Attempt,
    AttemptState,
    EscalationReason,
    JobOutcome,
    JobState,
    OutcomeKind,
    RecordInconsistent,
    fold_events,
    label,
)
from dunscaith.domain.model.strict_json import DecodeError
from dunscaith.domain.services.jobs.submit import check_name

T0 = datetime(2026, 1, 1, tzinfo=UTC)
JOB = JobId("j")
SPEC = JobSpec(JOB, "local", "local", ("true",), max_attempts=2)
POLICY = Policy(absence_deadline=timedelta(seconds=60))
S = ObjectState


def state_of(*events: ev.Event) -> JobState:
    head = ev.JobRecorded.of(SPEC, StoreIdentity("memory", "m"))
    return fold_events([(T0, head), *((T0, e) for e in events)])


def attempt(state: ObjectState | None, n: int = 1) -> Attempt:
    return Attempt(n, Nonce(f"n{n}"), AttemptState.RELEASED, ObjectId(f"o{n}"), state)


# ------------------------------------------------------------------ recovery policy

@pytest.mark.parametrize(("end", "made", "verdict"), [
    (S.COMPLETED, 1, OutcomeKind.SUCCEEDED),
    (S.FAILED, 1, OutcomeKind.FAILED),
    (S.CANCELLED, 1, OutcomeKind.FAILED),
    (S.TIMEOUT, 1, OutcomeKind.FAILED),
    (S.OUT_OF_MEMORY, 1, OutcomeKind.FAILED),
    (S.NODE_FAIL, 1, "again"),
    (S.BOOT_FAIL, 1, "again"),
    (S.PREEMPTED, 1, "again"),
    (S.NODE_FAIL, 2, OutcomeKind.FAILED),
    (S.PREEMPTED, 2, OutcomeKind.FAILED),
    (S.UNKNOWN, 1, OutcomeKind.ESCALATED),  # issue 22: may have succeeded; never failed, never run again
    (S.UNKNOWN, 2, OutcomeKind.ESCALATED),
])
def test_recovery_policy(end: ObjectState, made: int, verdict: object) -> None:
    got = judge_end(attempt(end, made), made, 2, POLICY)
    if verdict == "again":
        assert isinstance(got, TryAgain)
    else:
        assert isinstance(got, JobOutcome) and got.kind is verdict


# ------------------------------------------------------------------ exit codes

@pytest.mark.parametrize(("kind", "code"), [
    (OutcomeKind.SUCCEEDED, 0), (OutcomeKind.FAILED, 1), (OutcomeKind.ESCALATED, 1), (OutcomeKind.REFUSED, 2),
])
def test_exit_code_of_outcome(kind: OutcomeKind, code: int) -> None:
    assert for_outcome(JobOutcome(kind, "")) == code


@pytest.mark.parametrize(("signum", "code"), [(1, 129), (2, 130), (15, 143)])
def test_exit_code_of_signal(signum: int, code: int) -> None:
    assert for_signal(signum) == code


def test_exit_codes_of_the_supervisor_itself() -> None:
    assert (ExitCode.BAD_INPUT, ExitCode.INTERNAL, ExitCode.GAVE_UP, ExitCode.OUTSTANDING) == (2, 3, 4, 5)


# ------------------------------------------------------------------ observation

def view(oid: str, nonce: str | None, state: ObjectState = S.HELD, name: str = "j") -> ObjectView:
    return ObjectView(ObjectId(oid), JobId(name), Nonce(nonce) if nonce else None, state, "me")


SENT = (ev.Submitting(1, Nonce("n1")),)
CREATED = (*SENT, ev.Created(1, ObjectId("o1")))
CONFIRMED = (*CREATED, ev.Confirmed(1, ObjectId("o1")))
RELEASED = (*CONFIRMED, ev.Released(1, ObjectId("o1")))
UNKNOWN = (*SENT, ev.Unknown(1, "timeout"))


@pytest.mark.parametrize(("history", "objects", "complete", "kinds"), [
    (CREATED, [view("o1", "n1")], True, ["confirmed"]),
    (CREATED, [view("o9", "n1")], True, ["escalated"]),
    (CREATED, [view("o1", "n1"), view("o2", "n1")], True, ["escalated"]),
    (UNKNOWN, [view("o7", "n1")], True, ["found", "confirmed"]),
    (UNKNOWN, [view("o7", "n1", S.PENDING)], True, ["found", "confirmed", "observed"]),
    (UNKNOWN, [], True, ["absent"]),
    (UNKNOWN, [], False, []),
    (RELEASED, [view("o1", "n1", S.RUNNING)], True, ["observed"]),
    (RELEASED, [view("o1", "n1", S.PENDING)], True, []),
    (RELEASED, [view("o1", "n1", S.HELD)], True, ["observed"]),
    (RELEASED, [view("x", "other"), view("y", None)], True, ["absent"]),
    (RELEASED, [view("o1", "n1", S.RUNNING, name="k")], True, ["absent"]),
    ((*RELEASED, ev.Observed(1, ObjectId("o1"), "completed", 0, None, "")), [], True, []),
    ((*SENT, ev.Refused(1, "no")), [], True, []),
])
def test_observe(history: tuple[ev.Event, ...], objects: list[ObjectView], complete: bool, kinds: list[str]) -> None:
    got = sv.observe(state_of(*history), QueryResult(tuple(objects), complete), T0, POLICY)
    assert [e.KIND for e in got] == kinds


def test_observe_absence_becomes_vanished_only_after_the_deadline() -> None:
    state = state_of(*RELEASED, ev.Absent(1))
    empty = QueryResult((), True)
    assert sv.observe(state, empty, T0 + timedelta(seconds=60), POLICY) == []
    late = sv.observe(state, empty, T0 + timedelta(seconds=61), POLICY)
    assert [e.KIND for e in late] == ["escalated"] and late[0].reason == "vanished"  # type: ignore[union-attr]


# ------------------------------------------------------------------ plan

OUTCOME = ev.OutcomeReached("succeeded", "")


@pytest.mark.parametrize(("history", "steps"), [
    ((), ["start:1"]),
    (SENT, [sv.MarkUnknown(1)]),
    (CREATED, []),
    (CONFIRMED, [sv.Release(1, ObjectId("o1"))]),
    (RELEASED, []),
    ((*RELEASED, ev.Observed(1, ObjectId("o1"), "completed", 0, None, "")), ["outcome:succeeded"]),
    ((*RELEASED, ev.Observed(1, ObjectId("o1"), "failed", 3, None, "")), ["outcome:failed"]),
    ((*RELEASED, ev.Observed(1, ObjectId("o1"), "node_fail", None, None, "")), ["start:2"]),
    ((*SENT, ev.Refused(1, "no")), ["outcome:refused"]),
    (UNKNOWN, []),
    ((*UNKNOWN, ev.Absent(1), ev.Escalated("vanished", 1, "")), ["start:2"]),
    ((*RELEASED, ev.Absent(1), ev.Escalated("vanished", 1, "")), ["outcome:escalated"]),
    ((*CREATED, ev.Escalated("mismatch", 1, "")), ["outcome:escalated"]),
    ((*RELEASED, ev.Observed(1, ObjectId("o1"), "completed", 0, None, ""), OUTCOME), [sv.Settle()]),
    ((*RELEASED, ev.Observed(1, ObjectId("o1"), "completed", 0, None, ""), OUTCOME, ev.Settled()), []),
    ((*UNKNOWN, OUTCOME), [sv.MoveToResidual(1)]),
    ((*UNKNOWN, OUTCOME, ev.MovedToResidual(1, "unknown")), [sv.Settle()]),
    ((*UNKNOWN, OUTCOME, ev.MovedToResidual(1, "unknown"), ev.Settled()), []),
    ((*UNKNOWN, ev.Found(1, ObjectId("o5")), ev.Confirmed(1, ObjectId("o5")), OUTCOME),
     [sv.Cancel(1, ObjectId("o5"))]),
])
def test_plan(history: tuple[ev.Event, ...], steps: list[object]) -> None:
    def short(step: sv.Step) -> object:
        if isinstance(step, sv.Conclude):
            return f"outcome:{step.outcome.kind}"
        if isinstance(step, sv.StartAttempt):
            return f"start:{step.attempt}"
        return step

    assert [short(s) for s in sv.plan(state_of(*history), T0, POLICY)] == steps


def test_plan_never_marks_unknown_the_attempt_this_process_is_sending() -> None:
    assert sv.plan(state_of(*SENT), T0, POLICY, sending=1) == []


# ------------------------------------------------------------------ settlement and labels

@pytest.mark.parametrize(("history", "left"), [
    (RELEASED, [1]),
    (UNKNOWN, [1]),
    ((*RELEASED, ev.Observed(1, ObjectId("o1"), "completed", 0, None, "")), []),
    ((*SENT, ev.Refused(1, "no")), []),
])
def test_outstanding(history: tuple[ev.Event, ...], left: list[int]) -> None:
    assert [o.attempt for o in outstanding(state_of(*history))] == left


@pytest.mark.parametrize(("history", "word"), [
    ((), "recorded"), (SENT, "submitting"), (CREATED, "held"), (UNKNOWN, "unknown"),
    (RELEASED, "pending"), ((*RELEASED, ev.Observed(1, ObjectId("o1"), "running", None, None, "")), "running"),
    ((*RELEASED, OUTCOME), "succeeded"),
])
def test_label(history: tuple[ev.Event, ...], word: str) -> None:
    assert label(state_of(*history)) == word


# ------------------------------------------------------------------ fold and encoding

@pytest.mark.parametrize("history", [
    (ev.Created(1, ObjectId("o1")),),
    (ev.Submitting(2, Nonce("n")),),
    (*RELEASED, OUTCOME, OUTCOME),
])
def test_fold_refuses_a_record_that_does_not_tell_one_story(history: tuple[ev.Event, ...]) -> None:
    with pytest.raises(RecordInconsistent):
        state_of(*history)


def test_fold_refuses_a_record_not_starting_with_job_recorded() -> None:
    with pytest.raises(RecordInconsistent):
        fold_events([(T0, ev.Submitting(1, Nonce("n")))])


EVERY_EVENT: list[ev.Event] = [ev.JobRecorded.of(SPEC, StoreIdentity("sqlite", "/r/db", None, 1, 2)), *RELEASED,
               ev.Refused(1, "r"), ev.Unknown(1, "u"), ev.Found(1, ObjectId("o")),
               ev.Observed(1, ObjectId("o"), "failed", None, 9, "killed"), ev.Absent(1),
               ev.Cancelling(1, ObjectId("o")), ev.Escalated("vanished", None, "d"), ev.Delivered(0),
               ev.MovedToResidual(1, "unknown"), ev.Requested("r1", "hold"), ev.Answered("r1", "confirmed", ""),
               ev.HeldByUser(1, ObjectId("o")), ev.Requeueing(1, ObjectId("o")), ev.Requeued(1, ObjectId("o")),
               ev.ActionFailed("hold", 1, "started"), OUTCOME, ev.Settled(), ev.Pruned(),
               ev.NoticeDelivered("j@2026-01-01T00:00:00+00:00/outcome@2026-01-01T00:00:01+00:00")]


def test_every_kind_of_event_has_a_round_trip_case() -> None:
    assert {type(e).KIND for e in EVERY_EVENT} == set(ev._BY_KIND)


@pytest.mark.parametrize("event", EVERY_EVENT, ids=lambda e: e.KIND)
def test_every_event_round_trips(event: ev.Event) -> None:
    kind, data = ev.encode(event)
    assert ev.decode(kind, data) == event


@pytest.mark.parametrize(("kind", "data"), [
    ("launched", {}),
    ("created", {"attempt": 1}),
    ("created", {"attempt": 1, "object_id": "o", "extra": 1}),
    ("created", {"attempt": "1", "object_id": "o"}),
    ("created", {"attempt": True, "object_id": "o"}),
])
def test_decode_refuses(kind: str, data: dict[str, object]) -> None:
    with pytest.raises(DecodeError):
        ev.decode(kind, data)


# ------------------------------------------------------------------ spec and names

@pytest.mark.parametrize("name", ["", "-x", "a b", "a/b", "x" * 64, "é"])
def test_bad_job_names_are_refused(name: str) -> None:
    with pytest.raises(BadSpec):
        check_name(name)


@pytest.mark.parametrize(("command", "script"), [((), None), (("true",), "#!/bin/sh\n")])
def test_a_spec_needs_exactly_one_of_command_and_script(command: tuple[str, ...], script: str | None) -> None:
    with pytest.raises(BadSpec):
        JobSpec(JOB, "local", "local", command, script)


# ------------------------------------------------------------------ attendance judged from a pointer

@pytest.mark.parametrize(("state", "seen_ago", "unattended"), [
    ("running", None, True),
    ("running", 10, False),
    ("running", 200, False),
    ("running", 201, True),
    ("held", 500, True),
    ("succeeded", None, False),
    ("failed", 1000, False),
    ("escalated", 1000, False),
])
def test_unattended_by_pointer(state: str, seen_ago: int | None, unattended: bool) -> None:
    from dunscaith.domain.model.jobs.attendance import unattended_by_pointer
    from dunscaith.domain.model.jobs.pointer import Pointer
    from dunscaith.domain.model.jobs.record import HostIdentity

    now = T0 + timedelta(hours=1)
    pointer = Pointer(JOB, "other", "/var/tmp/x", HostIdentity("m", "other"), "/bin/dunscaith", "local", "local",
                      state, T0, None if seen_ago is None else now - timedelta(seconds=seen_ago))
    assert unattended_by_pointer(pointer, now, timedelta(seconds=10)) is unattended


# ------------------------------------------------------------------ status: Unattended and loop health

@pytest.mark.parametrize(("history", "held", "beat_ago", "unattended", "unhealthy"), [
    (RELEASED, True, 5, False, False),
    (RELEASED, True, 31, False, True),
    (RELEASED, True, None, False, True),
    (RELEASED, False, 5, True, False),
    (RELEASED, False, None, True, False),
    ((*RELEASED, OUTCOME), False, None, True, False),
    ((*RELEASED, OUTCOME, ev.Settled()), False, None, False, False),
])
def test_status_judgement(history: tuple[ev.Event, ...], held: bool, beat_ago: int | None, unattended: bool,
                          unhealthy: bool) -> None:
    from dunscaith.domain.model.jobs.record import LoopHealth
    from dunscaith.domain.services.jobs.status import judge

    now = T0 + timedelta(hours=1)
    health = LoopHealth(held, None if beat_ago is None else now - timedelta(seconds=beat_ago))
    view = judge(state_of(*history), health, now, poll=10.0)
    assert (view.unattended, view.loop_unhealthy) == (unattended, unhealthy)


# ------------------------------------------------------------------ escalation delivery keeps the record open

ESCALATED_DONE = (*RELEASED, ev.Observed(1, ObjectId("o1"), "completed", 0, None, ""),
                  ev.Escalated("duplicate", 1, "d"), OUTCOME)


@pytest.mark.parametrize(("history", "delivering", "steps"), [
    (ESCALATED_DONE, False, [sv.Settle()]),
    (ESCALATED_DONE, True, []),
    ((*ESCALATED_DONE, ev.Delivered(0)), True, [sv.Settle()]),
])
def test_settlement_waits_for_delivery_when_a_command_is_configured(
        history: tuple[ev.Event, ...], delivering: bool, steps: list[object]) -> None:
    state = state_of(*history)
    assert sv.plan(state, T0, POLICY, delivering=delivering) == steps
    assert bool(outstanding(state, delivering=delivering)) is (steps == [])


def test_a_delivery_of_an_escalation_never_raised_is_inconsistent() -> None:
    with pytest.raises(RecordInconsistent):
        state_of(*RELEASED, ev.Delivered(0))


def test_an_object_cancelled_while_held_is_judged_not_released_again() -> None:
    held_cancelled = (*CONFIRMED, ev.Observed(1, ObjectId("o1"), "cancelled", None, None, "by the user"))
    steps = sv.plan(state_of(*held_cancelled), T0, POLICY)
    assert len(steps) == 1 and isinstance(steps[0], sv.Conclude) and steps[0].outcome.kind is OutcomeKind.FAILED


MANUAL = replace(POLICY, residual=ResidualPolicy.MANUAL)


def test_plan_under_the_manual_residual_policy_escalates_an_unknown_attempt_once_and_waits() -> None:
    first = sv.plan(state_of(*UNKNOWN, OUTCOME), T0, MANUAL)
    assert [(type(s).__name__, getattr(s, "reason", None)) for s in first] == [
        ("Escalate", EscalationReason.UNKNOWN_ATTEMPT)]
    escalated = ev.Escalated("unknown-attempt", 1, "")
    assert sv.plan(state_of(*UNKNOWN, OUTCOME, escalated), T0, MANUAL) == []


def test_an_attempt_on_the_residual_list_is_not_observed_any_more() -> None:
    state = state_of(*UNKNOWN, OUTCOME, ev.MovedToResidual(1, "unknown"))
    assert sv.observe(state, QueryResult((view("o7", "n1"),), True), T0, POLICY) == []
