"""Submit: record a new job, then supervise it (its first attempt is the supervisor's first step)."""

from __future__ import annotations

from dataclasses import replace

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.names import name_problem
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.host import HostInfo
from dunscaith.ports.job_store import JobStore


def check_name(name: str) -> JobId:
    problem = name_problem("job name", name)
    if problem is not None:
        raise BadSpec(problem)
    return JobId(name)


class RecordJob:
    def __init__(self, store: JobStore, clock: Clock, crash: CrashPoints, host: HostInfo | None = None) -> None:
        self._store = store
        self._clock = clock
        self._crash = crash
        self._host = host

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
