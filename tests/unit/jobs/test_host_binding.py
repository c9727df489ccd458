"""On a store shared by login nodes, a local-scheduler job stays bound to the host it was submitted on."""

from __future__ import annotations

from pathlib import Path

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs.binding import bound_elsewhere
from dunscaith.domain.model.jobs.filesystem import Filesystem
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import HostIdentity, StoreIdentity
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.entrypoints.dunscaith.root.kinds import capabilities
from tests.unit.jobs.helpers import NoCrash

LOGIN1 = HostIdentity(machine_id="m1", hostname="login1")
LOGIN2 = HostIdentity(machine_id="m2", hostname="login2")
HOST_BOUND = capabilities("local").host_bound  # what the local scheduler's package declares of its objects


class Host:
    def __init__(self, identity: HostIdentity) -> None:
        self._identity = identity

    def identity(self) -> HostIdentity:
        return self._identity

    def filesystem(self, path: Path) -> Filesystem:
        return Filesystem("ext4", is_network=False)


class SharedStore(InMemoryStore):
    """A store bound to no host, as a server is."""

    def identity(self) -> StoreIdentity:
        return StoreIdentity(backend="postgresql", location="postgresql://alice@db/records")


class HostStore(InMemoryStore):
    def identity(self) -> StoreIdentity:
        return StoreIdentity(backend="sqlite", location="/var/tmp/x/records.db", host=LOGIN1)


def _record(store: InMemoryStore, adapter: str, host: HostIdentity) -> JobSpec:
    spec = JobSpec(JobId(f"j-{adapter}"), adapter, adapter, ("true",))
    RecordJob(store, FakeClock(), NoCrash(), Host(host), capabilities=capabilities)(spec)
    return spec


def test_a_local_job_on_a_shared_store_is_bound_to_the_host_it_was_submitted_on() -> None:
    store = SharedStore()
    spec = _record(store, "local", LOGIN1)
    state = fold(store.read(spec.name))
    assert (state.host, state.machine_id) == ("login1", "m1")
    assert bound_elsewhere(state, LOGIN1, HOST_BOUND) is None
    why = bound_elsewhere(state, LOGIN2, HOST_BOUND)
    assert why is not None and "host login1" in why and "local scheduler" in why


def test_a_cluster_job_on_a_shared_store_is_bound_to_no_host() -> None:
    store = SharedStore()
    spec = _record(store, "slurm", LOGIN1)
    state = fold(store.read(spec.name))
    assert state.host == "" and state.machine_id is None
    assert bound_elsewhere(state, LOGIN2, capabilities("slurm").host_bound) is None


def test_a_same_named_host_with_another_machine_id_is_another_host() -> None:
    store = SharedStore()
    state = fold(store.read(_record(store, "local", LOGIN1).name))
    assert bound_elsewhere(state, HostIdentity(machine_id="m9", hostname="login1"), HOST_BOUND) is not None


def test_a_job_in_a_hosts_own_store_keeps_that_stores_host() -> None:
    store = HostStore()
    state = fold(store.read(_record(store, "local", LOGIN2).name))
    assert (state.host, state.machine_id) == ("login1", "m1")  # the store's host, not the caller's


def test_what_binds_a_job_to_its_host_is_what_its_kind_declares_not_its_name() -> None:
    assert HOST_BOUND and not capabilities("slurm").host_bound
    store = SharedStore()
    spec = JobSpec(JobId("j-unbound"), "local", "local", ("true",))
    RecordJob(store, FakeClock(), NoCrash(), Host(LOGIN1))(spec)  # a kind that declared nothing
    state = fold(store.read(spec.name))
    assert state.host == "" and bound_elsewhere(state, LOGIN2, False) is None
