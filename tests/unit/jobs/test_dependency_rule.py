"""The dependency rule (domain/model/jobs/dependencies.py): when a waiting job may be created, what blocks
it, and how a pipeline ends; from the dependencies' facts alone."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dunscaith.domain.model.jobs.dependencies import (
    BLOCKED,
    READY,
    Blocked,
    Gated,
    JobFacts,
    Readiness,
    Waiting,
    gates,
    pipeline_end,
    readiness,
    step_end,
    step_line,
)
from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.exit_codes import ExitCode
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pipelines import parse_pipeline
from dunscaith.domain.model.jobs.state import OutcomeKind
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.model.jobs.waits import Dependency, DependencyKind

A, S = JobId("p.a"), JobId("p.s")
AFTER, ANY, EACH = DependencyKind.AFTER, DependencyKind.AFTER_ANY, DependencyKind.AFTER_EACH
OK, FAILED = OutcomeKind.SUCCEEDED, OutcomeKind.FAILED
NOT_SUCCESS = [kind for kind in OutcomeKind if kind is not OK]


def job(outcome: OutcomeKind | None = None, name: JobId = A) -> list[JobFacts]:
    return [JobFacts(name, outcome, started=True)]


def sweep(*outcomes: OutcomeKind | None) -> list[JobFacts]:
    return [JobFacts(JobId(f"{S}-{i}"), o, index=i, started=True) for i, o in enumerate(outcomes)]


def test_after_a_job_waits_until_it_succeeded() -> None:
    deps = [Dependency(A, AFTER)]
    assert readiness(deps, {A: job()}) == Waiting(A)
    assert readiness(deps, {A: job(OK)}) is READY


@pytest.mark.parametrize("outcome", NOT_SUCCESS)
def test_after_a_job_that_ended_otherwise_is_blocked_by_it(outcome: OutcomeKind) -> None:
    answer = readiness([Dependency(A, AFTER)], {A: job(outcome)})
    assert answer == Blocked(A, str(outcome), A)
    assert answer.line() == f"blocked by p.a ({outcome})"


@pytest.mark.parametrize("outcome", list(OutcomeKind))
def test_after_any_is_ready_once_the_job_has_any_outcome(outcome: OutcomeKind) -> None:
    assert readiness([Dependency(A, ANY)], {A: job()}) == Waiting(A)
    assert readiness([Dependency(A, ANY)], {A: job(outcome)}) is READY


def test_after_a_sweep_needs_every_element_to_succeed() -> None:
    deps = [Dependency(S, AFTER)]
    assert readiness(deps, {S: sweep(OK, None, OK)}) == Waiting(S)
    assert readiness(deps, {S: sweep(OK, OK, OK)}) is READY
    blocked = readiness(deps, {S: sweep(OK, None, FAILED, OutcomeKind.CANCELLED)})
    assert blocked == Blocked(S, "failed", JobId("p.s-2"))  # at once, the rest still running: it cannot succeed
    assert blocked.line() == "blocked by p.s (p.s-2 failed)"


def test_after_any_of_a_sweep_waits_for_every_element_outcome() -> None:
    assert readiness([Dependency(S, ANY)], {S: sweep(FAILED, None)}) == Waiting(S)
    assert readiness([Dependency(S, ANY)], {S: sweep(FAILED, OK)}) is READY


def test_after_each_reads_only_the_element_of_the_same_index() -> None:
    deps = [Dependency(S, EACH)]
    facts = {S: sweep(OK, FAILED, None)}
    assert readiness(deps, facts, index=0) is READY
    assert readiness(deps, facts, index=1) == Blocked(S, "failed", JobId("p.s-1"))
    assert readiness(deps, facts, index=2) == Waiting(S)
    assert readiness(deps, facts, index=7) == Blocked(S, "has no element 7", S)
    with pytest.raises(BadSpec):
        readiness(deps, facts)  # a job of its own has no index: a caller's mistake, never a guess


def test_a_resubmitted_element_reads_as_no_outcome_so_what_it_blocked_waits_again() -> None:
    deps = [Dependency(S, AFTER)]
    assert isinstance(readiness(deps, {S: sweep(OK, FAILED)}), Blocked)
    assert readiness(deps, {S: sweep(OK, None)}) == Waiting(S)  # resubmit --failed withdrew the outcome
    assert readiness(deps, {S: sweep(OK, OK)}) is READY


def test_a_dependency_not_recorded_blocks() -> None:
    assert readiness([Dependency(A, AFTER)], {}) == Blocked(A, "not recorded", A)


def test_the_first_blocking_dependency_wins_over_one_still_waited_for() -> None:
    b = JobId("p.b")
    deps = [Dependency(b, AFTER), Dependency(A, AFTER)]
    assert readiness(deps, {b: job(name=b), A: job(FAILED)}) == Blocked(A, "failed", A)
    assert readiness(deps, {b: job(name=b), A: job(OK)}) == Waiting(b)
    assert readiness([], {}) is READY


def test_facts_come_from_the_summary_the_store_keeps() -> None:
    at = datetime(2026, 12, 7, tzinfo=UTC)
    summary = JobSummary(
        job=JobId("p.s-3"),
        seq=9,
        state="failed",
        cluster="local",
        adapter="local",
        outcome="failed",
        outcome_detail="exit code 1",
        settled=True,
        attempts=1,
        object_id="x",
        recorded_at=at,
        updated_at=at,
        pruned_at=None,
        outstanding=0,
        undelivered=0,
        sweep=S,
        sweep_index=3,
    )
    assert JobFacts.of(summary) == JobFacts(JobId("p.s-3"), FAILED, 3, started=True)
    fresh = JobSummary(
        job=A,
        seq=1,
        state="recorded",
        cluster="local",
        adapter="local",
        outcome=None,
        outcome_detail="",
        settled=False,
        attempts=0,
        object_id=None,
        recorded_at=at,
        updated_at=at,
        pruned_at=None,
        outstanding=0,
        undelivered=0,
    )
    assert JobFacts.of(fresh) == JobFacts(A, None, None, started=False)


# --- a pipeline: gates, a failure blocking the chain below it, and the ending ----------------------------

CHAIN = """name = "p"
[[step]]
name = "s"
command = "train {}"
array = "0-2"
[[step]]
name = "e"
command = "evaluate {}"
array = "0-2"
after_each = ["s"]
[[step]]
name = "r"
command = "reduce"
after = ["e"]
[[step]]
name = "plot"
command = "plot"
after = ["r"]
[[step]]
name = "clean"
command = "clean"
after_any = ["r"]
"""


def _gated(outcomes: Mapping[str, OutcomeKind | None], started: set[str]) -> list[Gated]:
    pipeline = parse_pipeline(CHAIN, "p.toml")
    out = []
    for step in pipeline.order():
        names = (
            [(JobId(f"{step.job}-{e.index}"), e.index) for e in step.elements]
            if step.elements is not None
            else [(step.job, None)]
        )
        for name, index in names:
            facts = JobFacts(name, outcomes.get(name), index, started=name in started or name in outcomes)
            out.append(Gated(facts, step.job, pipeline.dependencies(step)))
    return out


def _ends(gated: list[Gated]) -> list[tuple[str, str]]:
    answers = gates(gated)
    steps: dict[str, list[JobFacts]] = {}
    for g in gated:
        steps.setdefault(g.group, []).append(g.facts)
    return [(name, step_end(name, facts, answers).state) for name, facts in steps.items()]


def test_nothing_is_ready_but_the_first_step_while_nothing_has_ended() -> None:
    answers = gates(_gated({}, set()))
    assert answers[JobId("p.s-0")] is READY
    assert answers[JobId("p.e-0")] == Waiting(JobId("p.s"))
    assert answers[JobId("p.r")] == Waiting(JobId("p.e"))


def test_each_element_goes_on_as_soon_as_its_own_element_succeeded() -> None:
    answers = gates(_gated({"p.s-0": OK, "p.s-1": FAILED}, {"p.s-2"}))
    assert answers[JobId("p.e-0")] is READY
    assert answers[JobId("p.e-1")] == Blocked(JobId("p.s"), "failed", JobId("p.s-1"))
    assert answers[JobId("p.e-2")] == Waiting(JobId("p.s"))
    # one blocked element of e blocks r at once, and r blocks plot; clean (after_any r) runs once r is
    # known never to run
    assert answers[JobId("p.r")] == Blocked(JobId("p.e"), BLOCKED, JobId("p.e-1"))
    assert answers[JobId("p.plot")] == Blocked(JobId("p.r"), BLOCKED, JobId("p.r"))
    assert answers[JobId("p.clean")] is READY


def test_a_pipeline_ends_0_only_when_every_step_succeeded() -> None:
    everything = {f"p.{s}-{i}": OK for s in "se" for i in range(3)} | {"p.r": OK, "p.plot": OK, "p.clean": OK}
    assert pipeline_end("p", []) is None
    gated = _gated(everything, set())
    answers = gates(gated)
    by_step: dict[str, list[JobFacts]] = {}
    for g in gated:
        by_step.setdefault(g.group, []).append(g.facts)
    end = pipeline_end("p", [step_end(n, f, answers) for n, f in by_step.items()])
    assert end is not None and end.exit_code is ExitCode.SUCCEEDED and end.line == "pipeline p: all 5 steps succeeded"


def test_a_failure_ends_the_pipeline_1_once_everything_else_ended_or_is_blocked() -> None:
    going = _gated({"p.s-0": OK, "p.s-1": FAILED}, {"p.s-2"})
    assert ("p.s", "going") in _ends(going)
    done = {"p.s-0": OK, "p.s-1": FAILED, "p.s-2": OK, "p.e-0": OK, "p.e-2": OK, "p.clean": OK}
    gated = _gated(done, set())
    assert _ends(gated) == [
        ("p.s", "failed"),
        ("p.e", "blocked"),
        ("p.r", "blocked"),
        ("p.plot", "blocked"),
        ("p.clean", "succeeded"),
    ]
    answers = gates(gated)
    by_step: dict[str, list[JobFacts]] = {}
    for g in gated:
        by_step.setdefault(g.group, []).append(g.facts)
    end = pipeline_end("p", [step_end(n.removeprefix("p."), f, answers) for n, f in by_step.items()])
    assert end is not None and end.exit_code is ExitCode.NOT_SUCCESS
    assert end.line == (
        "pipeline p: 1 of 5 steps succeeded; s failed, e blocked, r blocked, plot blocked (dunscaith status p)"
    )


@settings(deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["p.s-0", "p.s-1", "p.s-2", "p.e-0", "p.e-1", "p.e-2", "p.r", "p.plot", "p.clean"]),
        st.none() | st.sampled_from(list(OutcomeKind)),
    )
)
def test_never_ready_before_every_after_dependency_succeeded(outcomes: dict[str, OutcomeKind | None]) -> None:
    given_ = {name: o for name, o in outcomes.items() if o is not None}
    gated = _gated(given_, set())
    answers = gates(gated)
    facts = {g.facts.job: g.facts for g in gated}
    for name, answer in answers.items():
        if answer is not READY:
            continue
        g = next(g for g in gated if g.facts.job == name)
        for dep in g.dependencies:
            jobs = [f for f in facts.values() if f.job.startswith(dep.on + "-") or f.job == dep.on]
            if dep.kind is EACH:
                jobs = [f for f in jobs if f.index == g.facts.index]
            if dep.kind is ANY:
                assert all(f.outcome is not None or isinstance(answers.get(f.job), Blocked) for f in jobs)
            else:
                assert jobs and all(f.outcome is OK for f in jobs)


def _summary(
    name: str, state: str, outcome: str | None = None, attempts: int = 1, index: int | None = None
) -> JobSummary:
    at = datetime(2026, 12, 7, tzinfo=UTC)
    return JobSummary(
        job=JobId(name),
        seq=1,
        state=state,
        cluster="local",
        adapter="local",
        outcome=outcome,
        outcome_detail="",
        settled=outcome is not None,
        attempts=attempts,
        object_id=None,
        recorded_at=at,
        updated_at=at,
        pruned_at=None,
        outstanding=0,
        undelivered=0,
        sweep=JobId(name.rpartition("-")[0]) if index is not None else None,
        sweep_index=index,
    )


def test_status_says_a_step_in_one_line_and_what_holds_it_back() -> None:
    r = JobId("p.r")
    blocked = Blocked(JobId("p.s"), "failed", JobId("p.s-1"))
    assert step_line(r, [_summary("p.r", "recorded", attempts=0)], {r: blocked}) == (
        "p.r  blocked by p.s (p.s-1 failed)"
    )
    assert step_line(r, [_summary("p.r", "recorded", attempts=0)], {r: Waiting(JobId("p.s"))}) == (
        "p.r  waiting for p.s"
    )
    assert step_line(r, [_summary("p.r", "running")], {}) == "p.r  running"
    elements = [
        _summary("p.e-0", "succeeded", "succeeded", index=0),
        _summary("p.e-1", "recorded", attempts=0, index=1),
        _summary("p.e-2", "recorded", attempts=0, index=2),
    ]
    answers: dict[JobId, Readiness] = {JobId("p.e-1"): blocked, JobId("p.e-2"): Waiting(JobId("p.s"))}
    assert step_line(JobId("p.e"), elements, answers) == (
        "p.e  3 elements: 1 succeeded, 1 blocked, 1 waiting (blocked by p.s (p.s-1 failed))"
    )


def test_jobs_listed_out_of_order_are_never_taken_for_ones_not_recorded() -> None:
    answers = gates(list(reversed(_gated({}, set()))))
    assert answers[JobId("p.r")] == Waiting(JobId("p.e"))
    assert not any(isinstance(a, Blocked) for a in answers.values())
