"""Submit: record a new job, or a sweep's elements, then supervise it (its first attempt is the supervisor's
first step)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.kinds import Capabilities, declared_nothing
from dunscaith.domain.model.jobs.names import name_problem
from dunscaith.domain.model.jobs.record import JsonValue
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.domain.model.jobs.summary import SummaryQuery
from dunscaith.domain.model.jobs.sweeps import NameTaken
from dunscaith.domain.services.jobs.gates import Gates
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.host import HostInfo
from dunscaith.ports.job_store import JobExists, JobStore, UnknownJob
from dunscaith.ports.pointers import Pointers
from dunscaith.ports.scheduler import Scheduler


@dataclass(frozen=True, slots=True)
class Waited:
    """What this store holds under a name a job would wait for: a job (``indices`` None) or a sweep (its
    elements' indices)."""

    name: JobId
    indices: frozenset[int] | None = None

    @property
    def is_sweep(self) -> bool:
        return self.indices is not None


def check_name(name: str) -> JobId:
    problem = name_problem("job name", name)
    if problem is not None:
        raise BadSpec(problem)
    return JobId(name)


class _Recording:
    """What recording a job and recording a sweep share: the checks before, and the first event."""

    def __init__(self, store: JobStore, clock: Clock, crash: CrashPoints, host: HostInfo | None = None,
                 schedulers: Callable[[str], Scheduler] | None = None, pointers: Pointers | None = None,
                 capabilities: Capabilities = declared_nothing) -> None:
        self._store = store
        self._capabilities = capabilities  # a job's adapter -> what its scheduler kind declares (host-bound)
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

    def _first_event(self, spec: JobSpec) -> tuple[str, dict[str, JsonValue]]:
        """``spec``'s first event. A store bound to no host (shared by login nodes) records no host, unless
        the job's objects are bound to one (the local scheduler): then this host, where they will live."""
        where = self._store.identity()
        if where.host is None and self._capabilities(spec.adapter).host_bound and self._host is not None:
            where = replace(where, host=self._host.identity())
        return ev.encode(ev.JobRecorded.of(spec, where))

    def waited(self, name: JobId) -> Waited | None:
        """What this store holds under ``name``, a job or a sweep a new job would wait for (pruned ones
        too: their outcome stays recorded); None when nothing is, here."""
        try:
            self._store.summary(name)
            return Waited(name)
        except UnknownJob:
            pass
        elements = self._store.summaries(SummaryQuery(include_pruned=True, sweep=name))
        indices = frozenset(s.sweep_index for s in elements if s.sweep == name and s.sweep_index is not None)
        return Waited(name, indices) if indices else None

    def _create_all(self, specs: Sequence[JobSpec], what: str, point: str) -> None:
        """Every job of ``specs`` recorded in one transaction (a sweep's elements, a pipeline's jobs): all of
        them or, whatever happens (a refusal, a crash, kill -9), none."""
        at = self._clock.now()
        with self._store.batch():
            for spec in specs:
                try:
                    self._store.create(spec.name, at, *self._first_event(spec))
                except JobExists:  # recorded since the check (another submit): the batch records none
                    raise NameTaken(f"{spec.name} was recorded by someone else meanwhile; nothing of {what} "
                                    "was recorded: choose another --name") from None
                self._crash.reached(point)

    def _is_sweep(self, name: JobId) -> bool:
        """Whether a sweep of that name has elements recorded (pruned ones too: their names stay taken)."""
        return self._store.count(SummaryQuery(include_pruned=True, sweep=name)) > 0

    def _sweep_free(self, sweep: JobId, names: Sequence[JobId], recorded: set[JobId], rename: str) -> None:
        """NameTaken when sweep ``sweep`` (elements ``names``) would take a recorded job's or sweep's name;
        ``rename``: what the user changes to choose another ("--name for the sweep")."""
        if self._is_sweep(sweep):
            raise NameTaken(f"a sweep named {sweep} is already recorded; choose another --name")
        if sweep in recorded:
            raise NameTaken(f"a job named {sweep} is already recorded; choose another {rename}")
        taken = [name for name in names if name in recorded]
        if taken:
            more = f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""
            raise NameTaken(f"{taken[0]}{more}, an element's name, is already recorded as a job; choose another "
                            f"{rename}")
        sweeps = {found[1] for name in recorded if (found := _ELEMENT.fullmatch(name))}  # names sweeps may have
        for name in names:
            if name in sweeps and self._is_sweep(name):
                raise NameTaken(f"{name}, an element's name, is the name of a recorded sweep; choose another "
                                f"{rename}")


class RecordJob(_Recording):
    def check_free(self, name: JobId) -> None:
        """NameTaken when ``name`` is a recorded sweep's (asked again when recording)."""
        if self._is_sweep(name):
            raise NameTaken(f"{name} is the name of a recorded sweep; choose another --name")

    def __call__(self, spec: JobSpec) -> JobId:
        """Record ``spec`` as a new job (JobExists if the name is taken, NameTaken if it is a recorded sweep's:
        ``status NAME`` must name one thing); durable when this returns."""
        self.check_free(spec.name)
        self._store.create(spec.name, self._clock.now(), *self._first_event(spec))
        self._crash.reached("job-recorded")
        return spec.name


_ELEMENT = re.compile(r"(.+)-[0-9]+")  # an element's name: its sweep's name, '-', its index


class RecordSweep(_Recording):
    def __call__(self, sweep: JobId, specs: Sequence[JobSpec]) -> list[JobId]:
        """Record every element of ``sweep`` (``specs``, from ``sweeps.element_specs``) in one transaction:
        all of them or, whatever happens (a refusal, a crash, kill -9), none. NameTaken, with nothing
        recorded, when a job named ``sweep`` is recorded, when the sweep has elements already, or when an
        element's name is a recorded job's or sweep's. Durable when this returns."""
        names = [spec.name for spec in specs]
        self.check_free(sweep, names)
        self._create_all(specs, f"sweep {sweep}", "sweep-element-recorded")
        self._crash.reached("sweep-recorded")
        return names

    def check_free(self, sweep: JobId, names: Sequence[JobId]) -> None:
        """NameTaken when the sweep cannot be recorded under these names (asked again when recording)."""
        self._sweep_free(sweep, names, set(self._store.jobs()), "--name for the sweep")

class RecordPipeline(_Recording):
    def __call__(self, pipeline: JobId, specs: Sequence[JobSpec]) -> list[JobId]:
        """Record every job of pipeline ``pipeline`` (``specs``: each step's job, or its sweep's elements, from
        ``pipelines.step_jobs``) in one transaction: all of them or, whatever happens (a refusal, a crash,
        kill -9), none. NameTaken, with nothing recorded, when the pipeline's name or any step's job, sweep or
        element name is taken. Durable when this returns."""
        self.check_free(pipeline, specs)
        self._create_all(specs, f"pipeline {pipeline}", "pipeline-job-recorded")
        self._crash.reached("pipeline-recorded")
        return [spec.name for spec in specs]

    def check_free(self, pipeline: JobId, specs: Sequence[JobSpec]) -> None:
        """NameTaken when the pipeline cannot be recorded under these names: its own name a recorded job's,
        sweep's or pipeline's, or a step's job, sweep or element name taken (asked again when recording)."""
        recorded = set(self._store.jobs())
        if pipeline in recorded or self._is_sweep(pipeline):
            raise NameTaken(f"{pipeline} is the name of a recorded job or sweep; choose another --name for the "
                            "pipeline")
        if Gates(self._store).pipeline(pipeline) is not None:
            raise NameTaken(f"a pipeline named {pipeline} is already recorded; choose another --name")
        sweeps: dict[JobId, list[JobId]] = {}
        for spec in specs:
            if spec.member is not None:
                sweeps.setdefault(spec.member.sweep, []).append(spec.name)
                continue
            if spec.name in recorded:
                raise NameTaken(f"a job named {spec.name} is already recorded; choose another --name for the "
                                "pipeline")
            if self._is_sweep(spec.name):
                raise NameTaken(f"{spec.name} is the name of a recorded sweep; choose another --name for the "
                                "pipeline")
        for sweep, names in sweeps.items():
            self._sweep_free(sweep, names, recorded, "--name for the pipeline")
