"""The opt-in recovery of ends out of memory and past the time limit, and checkpoint requeues (issue 39):
the pure decisions (``recovery.after_end``, ``grown_value``) row by row and under hypothesis, the plan
that carries them, the spec that records them, and the whole story on fakes."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.attempt_needs import AttemptCause, submitting
from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.record import EventLine, JobRecord, StoreIdentity
from dunscaith.domain.model.jobs.recovery import Renewal, after_end, by_policy, grown_value
from dunscaith.domain.model.jobs.recovery_settings import (
    NO_RECOVERY,
    Growth,
    Recovery,
    Signal,
    SignalBefore,
    parse_signal_before,
    signal_problem,
)
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.spec import JobSpec, submission_problem
from dunscaith.domain.model.jobs.state import JobOutcome, JobState, OutcomeKind, fold
from dunscaith.domain.model.jobs.supervision import Conclude, StartAttempt, plan
from dunscaith.domain.services.jobs.submit import RecordJob
from tests.expect import present
from tests.unit.jobs.helpers import NoCrash, rig

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
WHERE = StoreIdentity("sqlite", "/r/db", None, 1, 2)
OOM = Growth(2.0, 16384, 2)  # 2x, at most 16G, two attempts
TIME = Growth(1.5, 7200, 2)  # 1.5x, at most 2 h
NEEDS = Resources(memory_mb=4096, time_limit_s=3600)
JOB = JobSpec(JobId("j"), "local", "fake", ("train",), resources=NEEDS, recovery=Recovery(OOM, TIME, 0))
USR1 = SignalBefore(Signal.USR1, 120)


def _ended(number: int, how: str, needs: Resources | None = None, cause: str | None = None) -> list[ev.Event]:
    oid = ObjectId(f"o{number}")
    start: ev.Event = (
        ev.Submitting(number, Nonce(f"n{number}"))
        if needs is None
        else submitting(number, Nonce(f"n{number}"), JOB, needs, cause, "grew")
    )
    return [
        start,
        ev.Created(number, oid),
        ev.Confirmed(number, oid),
        ev.Released(number, oid),
        ev.Observed(number, oid, how, None, 9 if how != "failed" else None, ""),
    ]


def _state(spec: JobSpec, *events: ev.Event) -> JobState:
    lines = [
        EventLine(seq, T0 + timedelta(seconds=seq), *ev.encode(e))
        for seq, e in enumerate([ev.JobRecorded.of(spec, WHERE), *events], start=1)
    ]
    return fold(JobRecord(spec.name, tuple(lines)))


def test_out_of_memory_grows_the_memory_twice_then_the_outcome_is_failed() -> None:
    first = _state(JOB, *_ended(1, "out_of_memory"))
    [step] = plan(first, T0, Policy())
    assert step == StartAttempt(
        2,
        "attempt 1 ended out_of_memory: memory 4G -> 8G (recovery.on_out_of_memory, attempt 1 of 2)",
        replace(NEEDS, memory_mb=8192),
        AttemptCause.OUT_OF_MEMORY,
    )
    second = _state(JOB, *_ended(1, "out_of_memory"), *_ended(2, "out_of_memory", step.needs, step.cause))
    [step2] = plan(second, T0, Policy())
    assert isinstance(step2, StartAttempt) and present(step2.needs).memory_mb == 16384
    third = _state(
        JOB,
        *_ended(1, "out_of_memory"),
        *_ended(2, "out_of_memory", step.needs, step.cause),
        *_ended(3, "out_of_memory", step2.needs, step2.cause),
    )
    assert plan(third, T0, Policy()) == [
        Conclude(
            JobOutcome(
                OutcomeKind.FAILED, "attempt 3 ended out_of_memory; recovery.on_out_of_memory's 2 attempt(s) are used"
            )
        )
    ]
    assert by_policy(third) == 1  # the grown attempts are their rule's to count, not recovery.attempts'


def test_the_time_limit_grows_and_stops_at_its_maximum() -> None:
    [step] = plan(_state(JOB, *_ended(1, "timeout")), T0, Policy())
    assert isinstance(step, StartAttempt) and step.cause == AttemptCause.TIME_LIMIT
    assert present(step.needs) == replace(NEEDS, time_limit_s=5400)
    at_max = replace(NEEDS, time_limit_s=7200)
    state = _state(JOB, *_ended(1, "timeout", at_max, str(AttemptCause.RESUBMIT)))
    assert plan(state, T0, Policy()) == [
        Conclude(
            JobOutcome(
                OutcomeKind.FAILED, "attempt 1 ended timeout with time limit 02:00:00, already at max_time 02:00:00"
            )
        )
    ]


def test_off_by_default_and_for_any_other_end() -> None:
    plain = replace(JOB, recovery=NO_RECOVERY)
    assert plan(_state(plain, *_ended(1, "out_of_memory")), T0, Policy()) == [
        Conclude(JobOutcome(OutcomeKind.FAILED, "out_of_memory, signal 9"))
    ]
    assert (
        after_end(
            _state(JOB, *_ended(1, "failed")), present(_state(JOB, *_ended(1, "failed")).current), JOB.recovery, None
        )
        is None
    )


def test_a_job_that_asked_no_memory_has_none_to_grow() -> None:
    bare = replace(JOB, resources=Resources(time_limit_s=60))
    [step] = plan(_state(bare, *_ended(1, "out_of_memory")), T0, Policy())
    assert step == Conclude(
        JobOutcome(
            OutcomeKind.FAILED,
            "attempt 1 ended out_of_memory; recovery.on_out_of_memory "
            "has no memory to grow (the job gave none: give --mem)",
        )
    )


def test_a_given_up_job_is_not_grown() -> None:
    ran = _ended(1, "out_of_memory")
    state = _state(JOB, *ran[:4], ev.Requested("r", "give-up"), ev.Answered("r", "confirmed", ""), ran[4])
    [step] = plan(state, T0, Policy())
    assert isinstance(step, Conclude) and step.outcome.kind is OutcomeKind.FAILED


def test_a_checkpoint_requeue_keeps_the_needs_then_the_time_limit_grows() -> None:
    spec = replace(JOB, recovery=Recovery(None, TIME, 1), signal_before=USR1)
    [step] = plan(_state(spec, *_ended(1, "timeout")), T0, Policy())
    assert step == StartAttempt(
        2,
        "attempt 1 reached its time limit after its signal (USR1@120): checkpoint requeue 1 of 1, same needs",
        NEEDS,
        AttemptCause.CHECKPOINT,
    )
    again = _state(spec, *_ended(1, "timeout"), *_ended(2, "timeout", NEEDS, str(AttemptCause.CHECKPOINT)))
    [step2] = plan(again, T0, Policy())
    assert isinstance(step2, StartAttempt) and step2.cause == AttemptCause.TIME_LIMIT  # the requeue is used
    without_signal = replace(spec, signal_before=None)
    [step3] = plan(_state(without_signal, *_ended(1, "timeout")), T0, Policy())
    assert isinstance(step3, StartAttempt) and step3.cause == AttemptCause.TIME_LIMIT


@given(st.integers(1, 1 << 30), st.floats(1.01, 100.0), st.integers(1, 1 << 30))
def test_a_grown_need_is_never_below_nor_beyond_its_bounds(current: int, factor: float, maximum: int) -> None:
    grown = grown_value(current, Growth(factor, maximum, 1), 1 << 40)
    assert grown >= current
    assert grown <= max(current, maximum)
    if current < maximum:
        assert grown > current  # below the maximum it always grows


@given(st.sampled_from(["out_of_memory", "timeout"]), st.integers(1, 6), st.integers(1, 4))
def test_a_rule_never_makes_more_attempts_than_it_has(how: str, ends: int, attempts: int) -> None:
    spec = replace(JOB, recovery=Recovery(Growth(2.0, 1 << 30, attempts), Growth(2.0, 1 << 20, attempts), 0))
    events: list[ev.Event] = [*_ended(1, how)]
    state = _state(spec, *events)
    for n in range(2, ends + 2):
        [step] = plan(state, T0, Policy())
        if not isinstance(step, StartAttempt):
            break
        events += _ended(n, how, step.needs, step.cause)
        state = _state(spec, *events)
    assert len(state.attempts) <= attempts + 1


def test_the_settings_are_recorded_in_the_spec_and_read_back() -> None:
    spec = replace(JOB, recovery=Recovery(OOM, TIME, 3), signal_before=USR1)
    recorded = ev.decode(*ev.encode(ev.JobRecorded.of(spec, WHERE)))
    assert isinstance(recorded, ev.JobRecorded) and recorded.spec() == spec
    plain = replace(JOB, recovery=NO_RECOVERY)
    assert "oom_attempts" not in ev.encode(ev.JobRecorded.of(plain, WHERE))[1]  # written as before
    state = _state(spec, *_ended(1, "timeout"))
    assert snapshot.decode(snapshot.encode(state, 6), 6) == state


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("USR1", "SIGNAL@SECONDS"),
        ("KILL@10", "SIGNAL@SECONDS"),
        ("USR1@0", "1 to 65535"),
        ("USR1@99999999", "SIGNAL@SECONDS"),
        ("USR1@70000", "1 to 65535"),
        ("", "SIGNAL@SECONDS"),
    ],
)
def test_a_bad_signal_before_is_one_line(text: str, says: str) -> None:
    with pytest.raises(BadSpec, match=says):
        parse_signal_before(text)


def test_a_signal_before_needs_a_longer_time_limit() -> None:
    assert parse_signal_before("sigusr1@120") == USR1
    assert "give --time too" in present(signal_problem(USR1, Resources()))
    assert "not before the time limit" in present(signal_problem(USR1, Resources(time_limit_s=120)))
    assert submission_problem(replace(JOB, signal_before=USR1)) is None


@pytest.mark.parametrize(
    ("factor", "maximum", "attempts"),
    [(1.0, 10, 1), (0.5, 10, 1), (float("nan"), 10, 1), (2.0, 0, 1), (2.0, 10, 0), (2.0, 10, 101)],
)
def test_a_growth_out_of_bounds_is_refused(factor: float, maximum: int, attempts: int) -> None:
    with pytest.raises(BadSpec):
        Growth(factor, maximum, attempts)


def test_on_fakes_a_job_out_of_memory_is_run_again_with_twice_the_memory_and_succeeds() -> None:
    r = rig()
    r.scheduler._exit_code_of = lambda spec: 0
    r.scheduler.end_state_of = lambda spec: (
        ObjectState.OUT_OF_MEMORY if (spec.resources.memory_mb or 0) < 8192 else None
    )
    job = RecordJob(r.store, r.clock, NoCrash())(JOB)
    r.run(job)
    state = r.state(job)
    assert present(state.outcome).kind is OutcomeKind.SUCCEEDED
    assert [(a.needs and a.needs.memory_mb, a.cause) for a in state.attempts] == [(4096, ""), (8192, "out-of-memory")]
    assert r.scheduler.count("create_held") == 2
    assert isinstance(after_end(state, state.attempts[0], JOB.recovery, None), Renewal)
