"""``status`` of a job not created because it waits for other jobs: the dependency rule's line, read from the
records (``waiting for ...`` while they run, ``blocked by ...`` once one failed), and none once it started."""

from __future__ import annotations

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.services.jobs.status import JobStatus
from tests.unit.jobs.helpers import StopAfter
from tests.unit.jobs.test_supervise_pipeline import NAME, _pipeline


def _line(status: JobStatus, job: str) -> str | None:
    gate = status.one(JobId(job)).gate
    return gate.line() if gate is not None else None


def test_a_step_waiting_for_a_sweep_says_so_before_anything_ran() -> None:
    rig = _pipeline()
    status = JobStatus(rig.store, rig.clock, poll=1.0)
    assert _line(status, "study.reduce") == "waiting for study.train"
    assert _line(status, "study.plot") == "waiting for study.reduce"
    assert status.one(JobId("study.train-0")).gate is None  # waits for nothing


def test_a_step_blocked_by_a_failed_element_says_which_and_why() -> None:
    rig = _pipeline(fails=lambda name: name == "study.train-1")
    rig.use_case.pipeline(NAME, StopAfter(rig.clock), fresh=True)
    status = JobStatus(rig.store, rig.clock, poll=1.0)
    assert _line(status, "study.reduce") == "blocked by study.train (study.train-1 failed)"
    assert _line(status, "study.plot") == "blocked by study.reduce (blocked)"


def test_a_step_that_started_has_no_gate_line() -> None:
    rig = _pipeline()
    rig.use_case.pipeline(NAME, StopAfter(rig.clock), fresh=True)
    assert JobStatus(rig.store, rig.clock, poll=1.0).one(JobId("study.reduce")).gate is None
