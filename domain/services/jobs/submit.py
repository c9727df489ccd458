"""Submit: record a new job, then supervise it (its first attempt is the supervisor's first step)."""

from __future__ import annotations

import re

from domain.model.jobs import events as ev
from domain.model.jobs.ids import JobId
from domain.model.jobs.spec import BadSpec, JobSpec
from ports.clock import Clock
from ports.crash_points import CrashPoints
from ports.job_store import JobStore

# A name every scheduler accepts and every filesystem stores: it names the job's objects and files.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def check_name(name: str) -> JobId:
    if not _NAME.fullmatch(name):
        raise BadSpec(f"job name {name!r}: use 1 to 63 letters, digits, '.', '_' or '-', starting with a "
                      "letter or digit")
    return JobId(name)


class RecordJob:
    def __init__(self, store: JobStore, clock: Clock, crash: CrashPoints) -> None:
        self._store = store
        self._clock = clock
        self._crash = crash

    def __call__(self, spec: JobSpec) -> JobId:
        """Record ``spec`` as a new job (JobExists if the name is taken); durable when this returns."""
        kind, data = ev.encode(ev.JobRecorded.of(spec, self._store.identity()))
        self._store.create(spec.name, self._clock.now(), kind, data)
        self._crash.reached("job-recorded")
        return spec.name
