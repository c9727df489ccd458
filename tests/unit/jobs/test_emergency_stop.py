"""``EmergencyStop`` on fakes: no record, no nonce check, every object of the name, running ones too."""

from __future__ import annotations

from datetime import UTC, datetime

from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectSpec, ObjectState
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.services.jobs.emergency_stop import EmergencyStop, EmergencyStopReport
from dunscaith.ports.scheduler import SchedulerError

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _pointer(job: str, cluster: str) -> Pointer:
    return Pointer(JobId(job), "other", "/var/tmp/x", HostIdentity("m", "other"), "/bin/dunscaith", cluster, "slurm",
                   "running", T0, None)


def test_every_object_of_the_name_is_stopped_running_ones_too_and_another_users_never() -> None:
    scheduler = FakeScheduler(owner="ana")
    made = [scheduler.create_held(ObjectSpec(JobId("job"), Nonce(f"n{i}"), ("true",))).object_id for i in range(2)]
    running, held = (oid for oid in made if oid is not None)
    scheduler.release(running)
    scheduler.start(running)
    unknown_nonce = scheduler.add_foreign(JobId("job"))
    theirs = scheduler.add_foreign(JobId("job"), owner="bob", state=ObjectState.RUNNING)

    done = EmergencyStop(lambda cluster: scheduler, InMemoryPointers())(JobId("job"), "local")

    assert done == EmergencyStopReport(JobId("job"), "local", (running, held, unknown_nonce), None)
    assert scheduler.get(theirs).view.state is ObjectState.RUNNING
    assert scheduler.count("query") == 0  # it reads nothing it does not need, and no record at all


def test_the_cluster_is_the_pointers_and_local_when_there_is_no_pointer_to_read() -> None:
    pointers = InMemoryPointers()
    pointers.write(_pointer("far", "hpc"))
    stop = EmergencyStop(lambda cluster: FakeScheduler(), pointers)

    assert (stop.cluster_of(JobId("far")), stop.cluster_of(JobId("nowhere"))) == ("hpc", "local")


def test_a_scheduler_that_cannot_stop_everything_is_reported_not_raised() -> None:
    class Failing(FakeScheduler):
        def stop_by_name(self, name: JobId) -> list[ObjectId]:
            raise SchedulerError("scancel --name=job: slurm_load_jobs error: Socket timed out")

    done = EmergencyStop(lambda cluster: Failing(), InMemoryPointers())(JobId("job"), "hpc")

    assert done == EmergencyStopReport(JobId("job"), "hpc", (), "scancel --name=job: slurm_load_jobs error: "
                                                                  "Socket timed out")
