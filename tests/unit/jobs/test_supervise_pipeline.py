"""A pipeline supervised in one loop (``SuperviseSweep.pipeline``): each step created only once what it waits
for is as it asks, never before and never twice; a failure blocks what waits on it and nothing is created
for that; kill -9 at any durable step, then ``supervise NAME`` again, changes none of that."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import CreateAnswer, ObjectSpec
from dunscaith.domain.model.jobs.pipelines import parse_pipeline, step_jobs
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.services.jobs.gates import Gates
from dunscaith.domain.services.jobs.submit import RecordJob
from tests.unit.jobs.helpers import NoCrash, StopAfter
from tests.unit.jobs.test_supervise_sweep import CountingRunning, Crash, Killed, SweepRig, _rig

NAME = JobId("study")

STUDY = """
name = "study"
[[step]]
name = "train"
command = "python train.py {}"
array = "0-2"
[[step]]
name = "reduce"
command = "python reduce.py"
after = ["train"]
[[step]]
name = "plot"
command = "python plot.py"
after = ["reduce"]
[[step]]
name = "report"
command = "python report.py"
after_any = ["train"]
"""


class Ordered(CountingRunning):
    """The fake scheduler, failing the jobs ``fails`` names, and noting for every create what the records of
    the jobs it waits for said at that moment (``before``)."""

    def __init__(self, store: InMemoryStore, fails: Callable[[str], bool]) -> None:
        super().__init__(exit_code_of=lambda spec: 1 if fails(spec.name) else 0)
        self.store = store
        self.before: dict[str, list[str | None]] = {}

    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        waits = fold(self.store.read(JobId(spec.name))).spec.waits
        gates = Gates(self.store)
        self.before[spec.name] = [
            s.outcome for dep in waits for s in (gates._group(dep.on).members)
        ]
        return super().create_held(spec)


def _pipeline(fails: Callable[[str], bool] = lambda name: False, text: str = STUDY,
              crash: NoCrash | None = None) -> SweepRig:
    store = InMemoryStore()
    rig = _rig(store=store, scheduler=Ordered(store, fails), crash=crash)
    spec = parse_pipeline(text, "study.toml")
    for step in spec.order():
        for job in step_jobs(spec, step, cluster="local", adapter="fake", workdir="/tmp", max_attempts=3):
            RecordJob(rig.store, rig.clock, NoCrash())(job)
    return rig


def _created(rig: SweepRig, job: str) -> int:
    return rig.scheduler.count("create_held", job)


def test_each_step_is_created_once_and_only_after_what_it_waits_for_succeeded() -> None:
    rig = _pipeline()
    done = rig.use_case.pipeline(NAME, StopAfter(rig.clock), fresh=True)
    assert done.report is not None and done.report.end is not None
    assert done.report.end.exit_code == 0, done.report.end.line
    assert {e.job: e.outcome for e in done.elements} == {
        "study.train-0": "succeeded", "study.train-1": "succeeded", "study.train-2": "succeeded",
        "study.reduce": "succeeded", "study.plot": "succeeded", "study.report": "succeeded"}
    assert all(_created(rig, e.job) == 1 for e in done.elements)
    before = rig.scheduler.before  # type: ignore[union-attr]
    assert before["study.reduce"] == ["succeeded"] * 3
    assert before["study.plot"] == ["succeeded"]
    assert all(outcome is not None for outcome in before["study.report"])


def test_a_failed_element_blocks_what_waits_for_its_step_and_nothing_is_created_for_it() -> None:
    rig = _pipeline(fails=lambda name: name == "study.train-1")
    done = rig.use_case.pipeline(NAME, StopAfter(rig.clock), fresh=True)
    outcomes: dict[str, str | None] = {e.job: e.outcome for e in done.elements}
    assert outcomes["study.train-1"] == "failed"
    assert outcomes["study.reduce"] is None and outcomes["study.plot"] is None
    assert _created(rig, "study.reduce") == 0 and _created(rig, "study.plot") == 0
    assert outcomes["study.report"] == "succeeded"  # after_any: whatever train's outcome
    assert dict[str, str](done.blocked)["study.reduce"] == "blocked by study.train (study.train-1 failed)"
    assert dict[str, str](done.blocked)["study.plot"] == "blocked by study.reduce (blocked)"
    assert done.report is not None and done.report.end is not None
    assert done.report.end.exit_code == 1
    assert "reduce blocked" in done.report.end.line and "train failed" in done.report.end.line


def test_supervise_again_after_the_end_creates_nothing_more() -> None:
    rig = _pipeline(fails=lambda name: name == "study.train-1")
    rig.use_case.pipeline(NAME, StopAfter(rig.clock), fresh=True)
    again = rig.use_case.pipeline(NAME, StopAfter(rig.clock), fresh=False)
    assert all(_created(rig, e.job) <= 1 for e in again.elements)
    assert _created(rig, "study.reduce") == 0


@pytest.mark.parametrize(("point", "at"), [
    ("outcome-committed", 1), ("outcome-committed", 3), ("settled-committed", 3),  # train's last end: reduce next
    ("start-decided", 4), ("submitting-committed", 4), ("create-answered", 4),  # mid-create of reduce
    ("answer-committed", 4), ("release-sent", 4), ("release-committed", 4),
    ("outcome-committed", 4), ("start-decided", 5), ("create-answered", 5), ("release-sent", 5),
])
def test_kill_at_any_durable_step_then_supervise_again_never_creates_early_or_twice(point: str, at: int) -> None:
    rig = _pipeline(crash=Crash(point, at))
    with pytest.raises(Killed):
        rig.use_case.pipeline(NAME, StopAfter(rig.clock), fresh=True)
    again = _rig(store=rig.store, scheduler=rig.scheduler, clock=rig.clock)  # a new process, the same world
    done = again.use_case.pipeline(NAME, StopAfter(rig.clock), fresh=False)
    assert done.report is not None and done.report.end is not None
    assert done.report.end.exit_code == 0, done.report.end.line
    assert all(_created(rig, e.job) == 1 for e in done.elements)
    before = rig.scheduler.before  # type: ignore[union-attr]
    assert before["study.reduce"] == ["succeeded"] * 3 and before["study.plot"] == ["succeeded"]


def test_a_job_waiting_alone_is_not_created_by_its_own_supervisor_before_its_dependency_succeeded() -> None:
    # submit --after: the job supervised alone (SuperviseJob) waits, reading records only
    rig = _pipeline()
    done = rig.one(JobId("study.reduce"), StopAfter(rig.clock, waits=3), fresh=True)
    assert done.end.ending.value == "drained"
    assert _created(rig, "study.reduce") == 0
    assert any("waiting for study.train" in line for line in rig.view.lines)


def test_a_step_alone_or_the_pipeline_again_is_refused_while_its_pipelines_supervisor_lives() -> None:
    from dunscaith.domain.services.jobs.sweep_lock import SweepSupervisedElsewhere

    rig = _pipeline()
    with rig.store.lock(NAME):  # the pipeline's live supervisor holds its name
        with pytest.raises(SweepSupervisedElsewhere, match="pipeline study is supervised by another live"):
            rig.one(JobId("study.reduce"), StopAfter(rig.clock), fresh=False)
        with pytest.raises(SweepSupervisedElsewhere, match="pipeline study is supervised by another live"):
            rig.use_case.pipeline(NAME, StopAfter(rig.clock), fresh=False)
    assert _created(rig, "study.reduce") == 0
