"""What a job waits for, in its record (issue 40): the first event keeps it by name, a snapshot keeps it, a
job that waits for nothing writes the first event builds before it wrote, and a bad one does not read."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pipelines import parse_pipeline, step_jobs
from dunscaith.domain.model.jobs.record import EventLine, JobRecord, StoreIdentity
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold_events
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.model.jobs.timeline import lines, timeline
from dunscaith.domain.model.jobs.waits import (
    Dependency,
    DependencyKind,
    PipelineMember,
    not_here_problem,
    same_indices_problem,
)

T0 = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
WHERE = StoreIdentity("memory", "here")
WAITS = (
    Dependency(JobId("p.a"), DependencyKind.AFTER),
    Dependency(JobId("p.b"), DependencyKind.AFTER),
    Dependency(JobId("p.c"), DependencyKind.AFTER_ANY),
    Dependency(JobId("p.s"), DependencyKind.AFTER_EACH),
)
ELEMENT = JobSpec(
    JobId("p.e-3"),
    "local",
    "local",
    ("true",),
    member=SweepMember(JobId("p.e"), 3),
    waits=WAITS,
    step_of=PipelineMember(JobId("p"), "e"),
)


def test_what_a_job_waits_for_round_trips_through_its_first_event() -> None:
    kind, data = ev.encode(ev.JobRecorded.of(ELEMENT, WHERE))
    assert data["after"] == ["p.a", "p.b"] and data["after_any"] == ["p.c"] and data["after_each"] == ["p.s"]
    assert data["pipeline"] == "p" and data["pipeline_step"] == "e"
    assert ev.decode(kind, data).spec() == ELEMENT  # type: ignore[union-attr]


def test_a_job_that_waits_for_nothing_writes_no_such_field_and_an_older_first_event_reads() -> None:
    plain = JobSpec(JobId("j"), "local", "local", ("true",))
    kind, data = ev.encode(ev.JobRecorded.of(plain, WHERE))
    assert not {"after", "after_any", "after_each", "pipeline", "pipeline_step"} & set(
        data
    )  # what an older build on another node reads
    assert ev.decode(kind, data).spec() == plain  # type: ignore[union-attr]


def test_a_name_waited_for_that_is_not_a_string_does_not_read() -> None:
    kind, data = ev.encode(ev.JobRecorded.of(ELEMENT, WHERE))
    with pytest.raises(ev.EventUndecodable, match="after, after_any or after_each holds a non-string"):
        ev.decode(kind, {**data, "after": ["p.a", 3]})


def test_after_each_is_for_an_element_only() -> None:
    with pytest.raises(BadSpec, match="after_each is for an element of a sweep"):
        JobSpec(JobId("j"), "local", "local", ("true",), waits=WAITS)


def test_the_snapshot_keeps_what_the_job_waits_for() -> None:
    state = fold_events([(T0, ev.JobRecorded.of(ELEMENT, WHERE))])
    kept = snapshot.encode(state, 32)
    assert snapshot.decode(kept, 32).spec == ELEMENT


def test_a_pipelines_step_jobs_record_what_the_step_waits_for() -> None:
    """What the pipeline's submit will record: each element of a waiting step, with the step's waits."""
    text = """name = "p"
[[step]]
name = "s"
command = "train {}"
array = "0-1"
[[step]]
name = "e"
command = "evaluate {}"
array = "0-1"
after_each = ["s"]
"""
    pipeline = parse_pipeline(text, "p.toml")
    step = pipeline.step("e")
    jobs = step_jobs(pipeline, step, cluster="local", adapter="local", workdir=None, max_attempts=1)
    assert [j.waits for j in jobs] == [(Dependency(JobId("p.s"), DependencyKind.AFTER_EACH),)] * 2
    assert {j.step_of for j in jobs} == {PipelineMember(JobId("p"), "e")}
    kind, data = ev.encode(ev.JobRecorded.of(jobs[1], WHERE))
    assert ev.decode(kind, data).spec() == jobs[1]  # type: ignore[union-attr]


def test_events_says_what_the_job_waits_for_on_its_first_line() -> None:
    first = replace(ev.JobRecorded.of(ELEMENT, WHERE), workdir="/w")
    record = JobRecord(JobId("p.e-3"), (EventLine(1, T0, *ev.encode(first)),))
    shown = list(lines(timeline(record), UTC))
    assert shown[1].endswith(
        "recorded: true (cluster local, local; at most 3 attempts, in /w; after p.a, p.b; "
        "after_any p.c; after_each p.s)"
    )


def test_after_each_between_sweeps_of_other_indices_is_said_in_one_line() -> None:
    assert same_indices_problem("b", "a", {0, 1}, {0, 1}) is None
    assert same_indices_problem("b", "a", {0, 1, 5}, {0, 1, 2}) == (
        '"b" has 3 elements and "a" 3, not the same indices (index 5 is in "b" only); element i waits for '
        "element i, so both need the same indices"
    )


def test_a_dependency_this_store_does_not_hold_is_refused_saying_where_it_is() -> None:
    assert not_here_problem("--after", "train", None) == (
        "--after train: no job or sweep of that name is recorded (dunscaith list shows them)"
    )
    assert not_here_problem("--after-any", "train", "login2") == (
        "--after-any train: it is recorded on host login2, in that host's own store, where this job could never "
        "see its outcome: submit this job on login2, or share one store between the login nodes (PostgreSQL: "
        "docs/record-backing.md)"
    )
