"""Where a job command runs (``OwningHost``): the host a pointer names, or the host a shared store's record
binds a local-scheduler job to; here otherwise. A host's own store is never opened just to ask."""

from __future__ import annotations

from datetime import UTC, datetime

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.services.jobs.owning_host import Owner, OwningHost
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.entrypoints.dunscaith.root.kinds import capabilities
from tests.unit.jobs.helpers import NoCrash
from tests.unit.jobs.test_host_binding import LOGIN1, LOGIN2, Host, SharedStore

SHARED = "postgresql://alice@db/records"


def _pointer(root_host: HostIdentity, record_root: str = "/var/tmp/dunscaith-alice") -> Pointer:
    return Pointer(JobId("j1"), root_host.hostname, record_root, root_host, f"/opt/{root_host.hostname}/dunscaith",
                   "local", "local", "running", datetime.now(UTC), None)


class NeverOpened:
    """A host's own store: routing must not open it just to ask where its records are."""

    asked = 0

    def __call__(self) -> str | None:
        self.asked += 1
        return None


def test_a_pointer_naming_another_host_s_root_sends_the_command_there_with_its_binary() -> None:
    pointers = InMemoryPointers()
    pointers.write(_pointer(LOGIN2))
    owner = OwningHost(pointers, LOGIN1, NeverOpened()).of_pointer(JobId("j1"))
    assert owner == Owner("login2", "/opt/login2/dunscaith")


def test_no_pointer_or_one_naming_this_host_leaves_the_record_here_to_decide() -> None:
    pointers = InMemoryPointers()
    where = NeverOpened()
    assert OwningHost(pointers, LOGIN1, where).of_pointer(JobId("j1")) is None  # no pointer
    pointers.write(_pointer(LOGIN1))
    assert OwningHost(pointers, LOGIN1, where).of_pointer(JobId("j1")) is None
    assert where.asked == 0  # the store was never asked where it is


def test_a_pointer_to_the_shared_store_this_command_opens_points_here_whichever_host_wrote_it() -> None:
    pointers = InMemoryPointers()
    pointers.write(_pointer(LOGIN2, SHARED))
    assert OwningHost(pointers, LOGIN1, lambda: SHARED).of_pointer(JobId("j1")) is None
    assert OwningHost(pointers, LOGIN1, lambda: None).of_pointer(JobId("j1")) == Owner("login2",
                                                                                       "/opt/login2/dunscaith")


def test_a_local_job_in_a_shared_store_is_acted_on_by_the_host_it_was_submitted_on() -> None:
    store = SharedStore()
    spec = JobSpec(JobId("j1"), "local", "local", ("true",))
    RecordJob(store, FakeClock(), NoCrash(), Host(LOGIN1), capabilities=capabilities)(spec)
    state = fold(store.read(spec.name))
    pointers = InMemoryPointers()

    def owning(here: HostIdentity) -> OwningHost:
        return OwningHost(pointers, here, lambda: SHARED, capabilities=capabilities)

    assert owning(LOGIN1).of_record(state) is None
    assert owning(LOGIN2).of_record(state) == Owner("login1", None)  # binary: here's
    pointers.write(_pointer(LOGIN1, SHARED))
    assert owning(LOGIN2).of_record(state) == Owner("login1", "/opt/login1/dunscaith")


def _element(name: str, root_host: HostIdentity, state: str = "running") -> Pointer:
    return Pointer(JobId(name), root_host.hostname, "/var/tmp/dunscaith-alice", root_host,
                   f"/opt/{root_host.hostname}/dunscaith", "local", "local", state, datetime.now(UTC), None)


def test_a_sweep_recorded_on_another_host_is_found_by_its_elements_pointers() -> None:
    pointers = InMemoryPointers()
    pointers.write(_element("expo-1", LOGIN2))  # another sweep's element: not exp's
    pointers.write(_element("exp-x", LOGIN2))  # no index: not an element's name
    where = OwningHost(pointers, LOGIN1, NeverOpened())
    assert where.of_sweep(JobId("exp")) is None
    pointers.write(_element("exp-12", LOGIN2, "succeeded"))  # settled: found by reading every pointer
    assert where.of_sweep(JobId("exp")) == (Owner("login2", "/opt/login2/dunscaith"), JobId("exp-12"))
    pointers.write(_element("exp-3", LOGIN1))  # one of this host's: the record here decides for it
    assert where.of_sweep(JobId("exp")) == (Owner("login2", "/opt/login2/dunscaith"), JobId("exp-12"))
