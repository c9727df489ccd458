"""RecordPipeline records every job of every step of a pipeline or none, never under a name that is taken:
the pipeline's own name (a job's, a sweep's, another pipeline's), a step's job or sweep, or an element."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pipelines import PipelineSpec, parse_pipeline, step_jobs
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.model.jobs.sweeps import NameTaken, SweepPlan, element_specs, parse_array
from dunscaith.domain.model.jobs.waits import Dependency, DependencyKind, PipelineMember
from dunscaith.domain.services.jobs.gates import Gates
from dunscaith.domain.services.jobs.submit import RecordJob, RecordPipeline, RecordSweep
from tests.unit.jobs.helpers import NoCrash

STUDY = """
name = "study"
[[step]]
name = "train"
command = "echo {}"
array = "0-2"
[[step]]
name = "reduce"
command = "cat"
after = ["train"]
[[step]]
name = "plot"
command = "true"
after_any = ["reduce"]
"""


def pipeline_specs(name: str | None = None) -> tuple[PipelineSpec, list[JobSpec]]:
    pipeline = parse_pipeline(STUDY, "study.toml", name)
    specs = [
        spec
        for step in pipeline.order()
        for spec in step_jobs(pipeline, step, cluster="local", adapter="local", workdir="/w", max_attempts=3)
    ]
    return pipeline, specs


def record(store: InMemoryStore, name: str | None = None, crash: NoCrash | None = None) -> list[JobId]:
    pipeline, specs = pipeline_specs(name)
    return RecordPipeline(store, FakeClock(), crash or NoCrash())(pipeline.name, specs)


def test_every_step_is_recorded_with_what_it_waits_for_and_the_pipeline_found_by_its_name() -> None:
    store, crash = InMemoryStore(), NoCrash()
    names = record(store, crash=crash)
    assert names == ["study.train-0", "study.train-1", "study.train-2", "study.reduce", "study.plot"]
    assert crash.points == ["pipeline-job-recorded"] * 5 + ["pipeline-recorded"]
    reduce = fold(store.read(JobId("study.reduce"))).spec
    assert reduce.waits == (Dependency(JobId("study.train"), DependencyKind.AFTER),)
    assert reduce.step_of == PipelineMember(JobId("study"), "reduce")
    assert fold(store.read(JobId("study.plot"))).spec.waits == (
        Dependency(JobId("study.reduce"), DependencyKind.AFTER_ANY),
    )
    element = fold(store.read(JobId("study.train-1"))).spec
    assert element.command == ("echo", "1") and element.member is not None and element.waits == ()
    found = Gates(store).pipeline("study")
    assert found is not None and [s.step for s in found.steps] == ["train", "reduce", "plot"]


def _job(name: str) -> Callable[[InMemoryStore], object]:
    return lambda s: RecordJob(s, FakeClock(), NoCrash())(JobSpec(JobId(name), "local", "local", ("true",)))


def _sweep(name: str) -> Callable[[InMemoryStore], object]:
    template = JobSpec(JobId(name), "local", "local", ("echo", "{}"))
    specs = list(element_specs(template, SweepPlan(JobId(name), parse_array("0-1"))))
    return lambda s: RecordSweep(s, FakeClock(), NoCrash())(JobId(name), specs)


@pytest.mark.parametrize(
    ("before", "says"),
    [
        (_job("study"), "study is the name of a recorded job or sweep; choose another --name for the pipeline"),
        (_sweep("study"), "study is the name of a recorded job or sweep"),
        (lambda s: record(s), "a pipeline named study is already recorded; choose another --name"),
        (_job("study.reduce"), "a job named study.reduce is already recorded; choose another --name for the pipeline"),
        (_sweep("study.plot"), "study.plot is the name of a recorded sweep"),
        (_job("study.train"), "a job named study.train is already recorded"),
        (_sweep("study.train"), "a sweep named study.train is already recorded"),
        (_job("study.train-2"), "study.train-2, an element's name, is already recorded as a job"),
    ],
)
def test_a_taken_name_refuses_the_whole_pipeline_and_records_none_of_it(
    before: Callable[[InMemoryStore], object], says: str
) -> None:
    store = InMemoryStore()
    before(store)
    recorded = set(store.jobs())
    with pytest.raises(NameTaken, match=says):
        record(store)
    assert set(store.jobs()) == recorded


def test_another_name_records_the_same_file_again() -> None:
    store = InMemoryStore()
    record(store)
    assert record(store, "again")[-1] == "again.plot"
    assert Gates(store).pipeline("again") is not None


def test_an_elements_spec_keeps_what_its_template_waits_for() -> None:
    waits = (Dependency(JobId("a"), DependencyKind.AFTER), Dependency(JobId("b"), DependencyKind.AFTER_ANY))
    template = JobSpec(JobId("s"), "local", "local", ("echo", "{}"), waits=waits)
    elements = list(element_specs(template, SweepPlan(JobId("s"), parse_array("0-2"))))
    assert [e.waits for e in elements] == [waits] * 3
