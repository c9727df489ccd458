"""An element's membership of its sweep is recorded in its first event and read back as it was; a job of its
own records none of it, so its first event is what builds before sweeps wrote."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import StoreIdentity
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.domain.model.jobs.sweeps import SweepMember, element_name

WHERE = StoreIdentity(backend="sqlite", location="/r", device=1, inode=2, host=None)


def test_an_elements_membership_survives_the_record() -> None:
    spec = JobSpec(JobId("exp-7"), "local", "local", ("echo", "7"), member=SweepMember(JobId("exp"), 7, 50))
    kind, data = ev.encode(ev.JobRecorded.of(spec, WHERE))
    assert (data["sweep"], data["sweep_index"], data["max_running"]) == ("exp", 7, 50)
    decoded = ev.decode(kind, data)
    assert isinstance(decoded, ev.JobRecorded)
    assert decoded.spec() == spec


def test_a_job_of_its_own_records_no_sweep_fields() -> None:
    spec = JobSpec(JobId("solo"), "local", "local", ("true",))
    kind, data = ev.encode(ev.JobRecorded.of(spec, WHERE))
    assert not {"sweep", "sweep_index", "max_running"} & set(data)
    decoded = ev.decode(kind, data)
    assert isinstance(decoded, ev.JobRecorded) and decoded.spec().member is None


def test_an_element_is_named_by_its_sweep_and_index() -> None:
    assert element_name(JobId("exp"), 12) == "exp-12"
    with pytest.raises(BadSpec, match="too long"):
        element_name(JobId("x" * 62), 100)
    with pytest.raises(BadSpec):
        SweepMember(JobId("exp"), 1, 0)
