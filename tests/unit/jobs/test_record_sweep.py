"""RecordSweep records every element of a sweep or none, and never under a name that is taken; RecordJob never
records a job under a recorded sweep's name (``status NAME`` names one thing)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.model.jobs.summary import SummaryQuery
from dunscaith.domain.model.jobs.sweeps import NameTaken, SweepMember, SweepPlan, element_specs, parse_array
from dunscaith.domain.services.jobs.submit import RecordJob, RecordSweep
from tests.unit.jobs.helpers import NoCrash


def _elements(sweep: str, spec: str = "0-4", max_running: int | None = 2) -> list[JobSpec]:
    template = JobSpec(JobId(sweep), "local", "local", ("echo", "{}"))
    return list(element_specs(template, SweepPlan(JobId(sweep), parse_array(spec), max_running)))


def _record(store: InMemoryStore, sweep: str, spec: str = "0-4") -> list[JobId]:
    return RecordSweep(store, FakeClock(), NoCrash())(JobId(sweep), _elements(sweep, spec))


def test_every_element_is_recorded_with_its_command_and_membership() -> None:
    store = InMemoryStore()
    assert _record(store, "exp") == [JobId(f"exp-{i}") for i in range(5)]
    for i in range(5):
        spec = fold(store.read(JobId(f"exp-{i}"))).spec
        assert spec.command == ("echo", str(i))
        assert spec.member == SweepMember(JobId("exp"), i, 2)
    assert store.count(SummaryQuery(sweep="exp")) == 5


@pytest.mark.parametrize(("before", "says"), [
    (lambda s: RecordJob(s, FakeClock(), NoCrash())(JobSpec(JobId("exp"), "local", "local", ("true",))),
     "a job named exp is already recorded"),
    (lambda s: _record(s, "exp", "7"), "a sweep named exp is already recorded"),
    (lambda s: RecordJob(s, FakeClock(), NoCrash())(JobSpec(JobId("exp-3"), "local", "local", ("true",))),
     "exp-3, an element's name, is already recorded as a job"),
    (lambda s: _record(s, "exp-2", "0"), "exp-2, an element's name, is the name of a recorded sweep"),
])
def test_a_taken_name_refuses_the_whole_sweep_and_records_none_of_it(before: Callable[[InMemoryStore], object],
                                                                    says: str) -> None:
    store = InMemoryStore()
    before(store)
    recorded = set(store.jobs())
    with pytest.raises(NameTaken, match=says):
        _record(store, "exp")
    assert set(store.jobs()) == recorded


def test_a_job_is_never_recorded_under_a_sweeps_name() -> None:
    store = InMemoryStore()
    _record(store, "exp")
    with pytest.raises(NameTaken, match="exp is the name of a recorded sweep"):
        RecordJob(store, FakeClock(), NoCrash())(JobSpec(JobId("exp"), "local", "local", ("true",)))
    assert JobId("exp") not in store.jobs()
    RecordJob(store, FakeClock(), NoCrash())(JobSpec(JobId("exp-9"), "local", "local", ("true",)))  # not a sweep
