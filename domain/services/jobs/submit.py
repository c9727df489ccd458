"""Submit: record a new job, then supervise it (its first attempt is the supervisor's first step)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.names import name_problem
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.host import HostInfo
from dunscaith.ports.job_store import JobStore
from dunscaith.ports.pointers import Pointers
from dunscaith.ports.scheduler import Scheduler


def check_name(name: str) -> JobId:
    problem = name_problem("job name", name)
    if problem is not None:
        raise BadSpec(problem)
    return JobId(name)


class RecordJob:
    def __init__(self, store: JobStore, clock: Clock, crash: CrashPoints, host: HostInfo | None = None,
                 schedulers: Callable[[str], Scheduler] | None = None, pointers: Pointers | None = None) -> None:
        self._store = store
        self._pointers = pointers
        self._clock = clock
        self._crash = crash
        self._host = host
        self._schedulers = schedulers  # a cluster's name -> its scheduler (opened once per command)

    def ready(self, cluster: str, resources: Resources, options: Sequence[str]) -> str | None:
        """Open ``cluster``'s scheduler (its folders checked) before anything is recorded: one that cannot be
        opened refuses the submit with nothing recorded. What it cannot honour of the job's needs and
        options, in one line, or None."""
        if self._schedulers is None:
            return None
        return self._schedulers(cluster).refusal(resources, options)

    def pointers_writable(self) -> None:
        """PointerError when no pointer could be written now: a job no other login node could find."""
        if self._pointers is not None:
            self._pointers.check_writable()

    def __call__(self, spec: JobSpec) -> JobId:
        """Record ``spec`` as a new job (JobExists if the name is taken); durable when this returns.

        A store bound to no host (shared by login nodes) records no host, unless the job's objects are
        bound to one (the local scheduler): then this host, where they will live."""
        where = self._store.identity()
        if where.host is None and spec.host_bound and self._host is not None:
            where = replace(where, host=self._host.identity())
        kind, data = ev.encode(ev.JobRecorded.of(spec, where))
        self._store.create(spec.name, self._clock.now(), kind, data)
        self._crash.reached("job-recorded")
        return spec.name
