"""``stop --emergency``: the exception to every rule of the record (seed 000).

It reads no record, takes no lock and uses no SSH: it opens the job's cluster with no store and stops
every object that carries the job's name, running ones too, so it works when the owning host is down
or its record root is gone. The job's pointer is read only to learn its cluster, and only if it reads;
otherwise the cluster is ``local``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.kinds import Capabilities, declared_nothing
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.ports.pointers import Pointers
from dunscaith.ports.scheduler import Scheduler, SchedulerError

DEFAULT_CLUSTER = "local"


@dataclass(frozen=True, slots=True)
class EmergencyStopReport:
    job: JobId
    cluster: str
    stopped: tuple[ObjectId, ...]
    problem: str | None  # what the scheduler said when it could not stop everything


class EmergencyStop:
    def __init__(self, schedulers: Callable[[str], Scheduler], pointers: Pointers,
                 here: HostIdentity | None = None, capabilities: Capabilities = declared_nothing) -> None:
        self._schedulers = schedulers  # a cluster's name -> its scheduler
        self._capabilities = capabilities  # a job's adapter -> what its scheduler kind declares (host-bound)
        self._pointers = pointers
        self._here = here  # this host: a local-scheduler job's processes are seen only on their own

    def cluster_of(self, job: JobId) -> str:
        """The cluster the job's pointer names, else ``local``: a missing or damaged pointer, or a home
        that cannot be read, must not keep the stop from running."""
        try:
            return self._pointers.read(job).cluster
        except Exception:
            return DEFAULT_CLUSTER

    def bound_elsewhere(self, job: JobId, here: HostIdentity | None = None) -> str | None:
        """The host whose processes this stop cannot reach: the pointer names a host-bound scheduler
        (the local one) on another machine. Only a hint for the user; the stop runs either way."""
        here = here or self._here
        if here is None:
            return None
        try:
            pointer = self._pointers.read(job)
        except Exception:
            return None
        if not self._capabilities(pointer.adapter).host_bound or pointer.root_host.machine_id == here.machine_id:
            return None
        return pointer.host

    def __call__(self, job: JobId, cluster: str) -> EmergencyStopReport:
        try:
            stopped = tuple(self._schedulers(cluster).stop_by_name(job))
        except SchedulerError as exc:
            return EmergencyStopReport(job, cluster, (), str(exc))
        return EmergencyStopReport(job, cluster, stopped, None)
