"""``resubmit JOB --memory 8G ...`` (issue 39): each attempt records its own needs, the new attempt is made
with those given (the others stay the current attempt's), and a job of its own that failed runs again.

The rule and the fold first (pure), then the whole story on fakes: the command confirms, the supervisor
makes the next attempt with the needs given, and the scheduler is asked for exactly those."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.attempt_needs import (
    AttemptCause,
    changed,
    object_spec,
    requested_needs,
    submitting,
    submitting_needs,
)
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.record import EventLine, JobRecord, StoreIdentity
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import Action, JobState, OutcomeKind, fold
from dunscaith.domain.model.jobs.supervision import StartAttempt, plan
from dunscaith.domain.model.jobs.timeline import timeline
from dunscaith.domain.services.jobs.commands import Answer, JobCommands
from dunscaith.domain.services.jobs.submit import RecordJob
from tests.expect import present
from tests.unit.jobs.helpers import NoCrash, StopAfter, rig

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
NEEDS = Resources(cpus=2, memory_mb=4096, time_limit_s=3600, queue="short")
SOLO = JobSpec(JobId("solo"), "local", "fake", ("false",), max_attempts=1, resources=NEEDS)
WHERE = StoreIdentity("sqlite", "/r/db", None, 1, 2)
FAILED: list[ev.Event] = [
    ev.Submitting(1, Nonce("n1")),
    ev.Created(1, ObjectId("o1")),
    ev.Confirmed(1, ObjectId("o1")),
    ev.Released(1, ObjectId("o1"), None, None),
    ev.Observed(1, ObjectId("o1"), "failed", 1, None, ""),
    ev.OutcomeReached("failed", "failed, exit code 1"),
    ev.Settled(),
]


def _record(spec: JobSpec, *events: ev.Event) -> JobRecord:
    lines = [
        EventLine(seq, T0 + timedelta(seconds=seq), *ev.encode(e))
        for seq, e in enumerate([ev.JobRecorded.of(spec, WHERE), *events], start=1)
    ]
    return JobRecord(spec.name, tuple(lines))


def _state(spec: JobSpec, *events: ev.Event) -> JobState:
    return fold(_record(spec, *events))


_sizes = st.one_of(st.none(), st.integers(1, 1 << 20))
_needs = st.builds(
    Resources,
    cpus=_sizes,
    memory_mb=_sizes,
    time_limit_s=_sizes,
    queue=st.one_of(st.none(), st.sampled_from(["short", "long"])),
)


@given(_needs, _needs)
def test_changed_takes_each_need_given_and_keeps_the_others(base: Resources, change: Resources) -> None:
    new = changed(base, change)
    for name in ("cpus", "memory_mb", "time_limit_s", "queue"):
        given_value = getattr(change, name)
        assert getattr(new, name) == (given_value if given_value is not None else getattr(base, name))


def test_a_gpu_count_given_takes_its_type_with_it() -> None:
    base = Resources(gpus=1, gpu_type="a100")
    assert changed(base, Resources(gpus=2)) == Resources(gpus=2)
    assert changed(base, Resources(cpus=4)) == Resources(cpus=4, gpus=1, gpu_type="a100")


@given(_needs)
def test_an_attempts_needs_survive_its_event_and_reach_the_create_request(needs: Resources) -> None:
    event = submitting(2, Nonce("n2"), SOLO, needs, str(AttemptCause.RESUBMIT), "asked")
    decoded = ev.decode(*ev.encode(event))
    assert isinstance(decoded, ev.Submitting)
    assert submitting_needs(decoded, SOLO) == needs
    assert object_spec(SOLO, decoded).resources == needs and object_spec(SOLO, decoded).nonce == "n2"


def test_an_attempt_with_the_jobs_needs_is_written_as_before() -> None:
    plain = submitting(1, Nonce("n1"), SOLO, None, None, "first attempt")
    assert ev.encode(plain) == ("submitting", {"attempt": 1, "nonce": "n1"})
    assert ev.encode(submitting(1, Nonce("n1"), SOLO, NEEDS, None, "x")) == ev.encode(plain)
    assert submitting_needs(plain, SOLO) == NEEDS
    assert ev.encode(ev.Requested("r", "hold")) == ("request", {"request": "r", "action": "hold"})
    assert requested_needs(ev.Requested("r", "resubmit")) is None


def test_a_failed_job_of_its_own_resubmitted_with_more_memory_plans_an_attempt_with_it() -> None:
    asked = ev.Requested("r", "resubmit", memory_mb=8192)
    state = _state(SOLO, *FAILED, asked, ev.Answered("r", "confirmed", ""))
    assert (state.outcome, state.settled, state.rerun_of) == (None, False, 1)
    grown = replace(NEEDS, memory_mb=8192)
    assert state.next_needs == grown and present(state.request("r")).needs == Resources(memory_mb=8192)
    [step] = plan(state, T0, Policy())
    assert step == StartAttempt(
        2,
        "attempt 1 failed; resubmitted by the user with cpus=2 memory=8G time=01:00:00 queue=short",
        grown,
        AttemptCause.RESUBMIT,
    )
    assert snapshot.decode(snapshot.encode(state, 10), 10) == state
    made = submitting(2, Nonce("n2"), SOLO, step.needs, step.cause, step.reason)
    after = _state(SOLO, *FAILED, asked, ev.Answered("r", "confirmed", ""), made)
    second = present(after.current)
    assert (second.needs, second.cause) == (grown, "resubmit") and after.next_needs is None
    assert after.attempts[0].needs == NEEDS and after.attempts[0].cause == ""  # the first keeps its own
    assert snapshot.decode(snapshot.encode(after, 11), 11) == after
    texts = [e.text for e in timeline(_record(SOLO, *FAILED, asked, ev.Answered("r", "confirmed", ""), made)).entries]
    assert "asks to resubmit (request r) with memory=8G" in texts
    assert any("needs cpus=2 memory=8G time=01:00:00 queue=short (resubmit: attempt 1 failed" in t for t in texts)


def test_a_resubmit_without_needs_keeps_what_the_current_attempt_grew_to() -> None:
    grown = replace(NEEDS, memory_mb=8192)
    second: list[ev.Event] = [
        submitting(2, Nonce("n2"), SOLO, grown, str(AttemptCause.OUT_OF_MEMORY), "grew"),
        ev.Created(2, ObjectId("o2")),
        ev.Confirmed(2, ObjectId("o2")),
        ev.Released(2, ObjectId("o2")),
        ev.Observed(2, ObjectId("o2"), "failed", 1, None, ""),
        ev.OutcomeReached("failed", "x"),
        ev.Settled(),
    ]
    state = _state(SOLO, *FAILED[:5], *second, ev.Requested("r", "resubmit"), ev.Answered("r", "confirmed", ""))
    [step] = plan(state, T0, Policy())
    assert isinstance(step, StartAttempt) and step.needs == grown and step.attempt == 3


def test_resubmit_of_a_failed_job_with_more_memory_makes_one_object_with_it() -> None:
    r = rig(exit_code=1)
    job = RecordJob(r.store, r.clock, NoCrash())(SOLO)
    r.run(job)
    assert present(r.state(job).outcome).kind is OutcomeKind.FAILED and r.state(job).settled
    r.scheduler._exit_code_of = lambda spec: 0 if spec.resources.memory_mb == 8192 else 1

    commands = JobCommands(r.store, r.clock, NoCrash(), lambda: r.supervisor, needs=Resources(memory_mb=8192))
    result = commands(job, Action.RESUBMIT, StopAfter(r.clock))
    assert result.answer is Answer.CONFIRMED, result.detail
    assert len(r.state(job).attempts) == 1  # a command makes no attempt: its supervisor does

    r.run(job)
    state = r.state(job)
    assert present(state.outcome).kind is OutcomeKind.SUCCEEDED
    assert [a.needs for a in state.attempts] == [NEEDS, replace(NEEDS, memory_mb=8192)]
    assert r.scheduler.count("create_held") == 2
    assert sorted(present(o.spec).resources.memory_mb or 0 for o in r.scheduler.objects().values()) == [4096, 8192]
