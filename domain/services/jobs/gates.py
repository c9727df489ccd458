"""The gates of jobs that wait for other jobs (``submit --after``, a pipeline's steps), read from the store.

The rule is the domain's (domain/model/jobs/dependencies.py): this reads what it needs, the summaries of
what is waited for (one ``summaries`` query per sweep, one ``summary`` per job) and, once per job or sweep,
the first event of one of its jobs for what *it* waits for, and hands them to ``gates``. Never a scheduler
query: a waiting job costs its supervisor nothing but these reads, and only when something it waits for
may have changed.

A pipeline is found by what its jobs recorded (``JobSpec.step_of``), never by their names alone: its
jobs are the ones named ``NAME.<step>`` (a sweep step's elements ``NAME.<step>-<i>``) whose first event
says they are steps of ``NAME``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from dunscaith.domain.model.jobs.dependencies import (
    Blocked,
    Gated,
    JobFacts,
    PipelineEnd,
    Readiness,
    Ready,
    StepEnd,
    gates,
    pipeline_end,
    step_end,
)
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery
from dunscaith.domain.model.jobs.waits import Dependency
from dunscaith.domain.services.jobs.sweep_members import by_index
from dunscaith.ports.job_store import JobStore, StoreError, UnknownJob


@dataclass(frozen=True, slots=True)
class Group:
    """A job of its own, or a sweep: what others wait for by name. ``members``: its summaries (the job, or
    every element by index); ``spec``: the first event's spec of one of them (what they wait for, the
    pipeline they are a step of), None when no member's record reads."""

    name: JobId
    members: tuple[JobSummary, ...]
    spec: JobSpec | None

    @property
    def is_sweep(self) -> bool:
        return bool(self.members) and self.members[0].sweep == self.name

    @property
    def dependencies(self) -> tuple[Dependency, ...]:
        return self.spec.waits if self.spec is not None else ()


@dataclass(frozen=True, slots=True)
class PipelineStep:
    """One step of a recorded pipeline: its own name, and its job or sweep."""

    step: str
    group: Group

    @property
    def job(self) -> JobId:
        return self.group.name


@dataclass(frozen=True, slots=True)
class RecordedPipeline:
    """A pipeline as its jobs' records say it: its steps, each after what it waits for."""

    name: JobId
    steps: tuple[PipelineStep, ...]

    def members(self) -> list[JobSummary]:
        """Every job of every step: the steps' jobs and their sweeps' elements."""
        return [member for step in self.steps for member in step.group.members]

    def step(self, name: str) -> PipelineStep | None:
        return next((s for s in self.steps if s.step == name), None)


@dataclass(frozen=True, slots=True)
class PipelineReport:
    """Where a recorded pipeline stands: the rule's answer for every job not started, each step's end so
    far, and how the pipeline ended (None while a step is still going)."""

    pipeline: RecordedPipeline
    answers: Mapping[JobId, Readiness]
    steps: tuple[StepEnd, ...]
    end: PipelineEnd | None


@dataclass(frozen=True, slots=True)
class GateReading:
    """What the rule says of the jobs asked about, and the jobs it read that have no outcome yet (a group
    not recorded is named by its own name): while those are all supervised by the asker, nothing but its
    own moves can change the answers."""

    answers: dict[JobId, Readiness]
    open: frozenset[JobId]
    groups: Mapping[JobId, Group] = field(default_factory=dict)  # what the answers were worked out from
    asked: frozenset[JobId] = frozenset()  # the jobs asked about


class Gates:
    """Reads the facts the dependency rule needs. The first events it reads are kept: they never change."""

    def __init__(self, store: JobStore) -> None:
        self._store = store
        self._specs: dict[JobId, JobSpec | None] = {}

    # ------------------------------------------------------------------ one job, or many jobs at once

    def readiness(self, spec: JobSpec) -> Readiness:
        """Whether the job ``spec`` describes may be created now (Ready when it waits for nothing)."""
        if not spec.waits:
            return Ready()
        index = spec.member.index if spec.member is not None else None
        group = spec.member.sweep if spec.member is not None else spec.name  # what others wait for it by
        groups = self._groups([d.on for d in spec.waits], {})
        gated = [*_ordered(groups), Gated(JobFacts(spec.name, index=index), group, spec.waits)]
        return gates(gated)[spec.name]

    def answers(self, members: Sequence[JobSummary]) -> dict[JobId, Readiness]:
        """The rule's answer for every member of ``members`` not started and without an outcome, what each
        waits for read now (a member that waits for nothing is Ready). One summaries query per group."""
        return self.read(members).answers

    def read(self, members: Sequence[JobSummary]) -> GateReading:
        """``answers``, and the jobs read on the way that have no outcome yet (what may still change them)."""
        known: dict[JobId, Group] = {}
        for name, group_members in _by_group(members).items():
            known[name] = Group(name, tuple(group_members), self._spec_of(group_members))
        wanted = [d.on for group in known.values() for d in group.dependencies]
        return _reading(self._groups(wanted, known), frozenset(m.job for m in members))

    def again(self, reading: GateReading, moved: Collection[JobId]) -> GateReading:
        """``reading`` worked out again with the ``moved`` jobs' summaries read now, and nothing else: what the
        answers are if only those jobs changed. One summary read a moved job, not every group's summaries."""
        fresh = {job: self._store.summary(job) for job in moved}
        groups = {name: replace(group, members=tuple(fresh.get(m.job, m) for m in group.members))
                  if any(m.job in fresh for m in group.members) else group
                  for name, group in reading.groups.items()}
        return _reading(groups, reading.asked)

    def last_seqs(self, jobs: Sequence[JobId]) -> dict[JobId, int]:
        """How far each job's record goes (``JobStore.last_seqs``): a record that did not grow did not change."""
        return self._store.last_seqs(jobs)

    def waits(self, members: Sequence[JobSummary]) -> bool:
        """Whether any member not started waits for something (its group's first event says so)."""
        for group_members in _by_group(m for m in members if m.attempts == 0 and m.outcome is None).values():
            spec = self._spec_of(group_members)
            if spec is not None and spec.waits:
                return True
        return False

    # ------------------------------------------------------------------ pipelines

    def pipeline(self, name: str) -> RecordedPipeline | None:
        """The pipeline recorded under ``name``, or None when no job records it is a step of one so named."""
        prefix = f"{name}."
        found = [s for s in self._store.summaries(SummaryQuery(include_pruned=True, prefix=prefix))
                 if s.job.startswith(prefix)]
        steps: list[PipelineStep] = []
        for group_name, group_members in _by_group(found).items():
            spec = self._spec_of(group_members)
            if spec is None or spec.step_of is None or spec.step_of.pipeline != name:
                continue
            steps.append(PipelineStep(spec.step_of.step, Group(group_name, tuple(group_members), spec)))
        if not steps:
            return None
        order = {g.name: i for i, g in enumerate(_ordered_groups({s.job: s.group for s in steps}))}
        return RecordedPipeline(JobId(name), tuple(sorted(steps, key=lambda s: order[s.job])))

    def report(self, pipeline: RecordedPipeline) -> PipelineReport:
        """``pipeline``'s steps judged from their members' summaries as given (one fold-free pass)."""
        answers = gates(_ordered({s.job: s.group for s in pipeline.steps}))
        ends = tuple(step_end(s.step, (JobFacts.of(m) for m in s.group.members), answers) for s in pipeline.steps)
        return PipelineReport(pipeline, answers, ends, pipeline_end(pipeline.name, ends))

    # ------------------------------------------------------------------ reading

    def _spec_of(self, members: Sequence[JobSummary]) -> JobSpec | None:
        """The first event's spec of the first member whose record reads (kept: it never changes)."""
        for member in members:
            if member.job in self._specs:
                return self._specs[member.job]
            try:
                record = self._store.read(member.job)
                spec: JobSpec | None = fold(replace(record, events=record.events[:1])).spec
            except UnknownJob:
                continue
            except (StoreError, JobsError):
                spec = None
            self._specs[member.job] = spec
            if spec is not None:
                return spec
        return None

    def _groups(self, names: Iterable[JobId], known: dict[JobId, Group]) -> dict[JobId, Group]:
        """``known`` and every group ``names`` reaches (what they wait for, and so on), read now."""
        groups = dict(known)
        todo = [n for n in names if n not in groups]
        while todo:  # each name is read once: the walk ends when every one reached is read
            name = todo.pop()
            if name in groups:
                continue
            group = self._group(name)
            groups[name] = group
            todo.extend(d.on for d in group.dependencies if d.on not in groups)
        return groups

    def _group(self, name: JobId) -> Group:
        """What the store holds under ``name``: a job, or a sweep's elements (none: a group with no members,
        which the rule reads as not recorded)."""
        try:
            one = self._store.summary(name)
            return Group(name, (one,), self._spec_of([one]) if one.attempts == 0 else None)
        except UnknownJob:
            pass
        elements = by_index([s for s in self._store.summaries(SummaryQuery(include_pruned=True, sweep=name))
                             if s.sweep == name])
        return Group(name, tuple(elements), self._spec_of(elements) if elements else None)


def _reading(groups: Mapping[JobId, Group], asked: frozenset[JobId]) -> GateReading:
    """The rule's answers from ``groups``, and the jobs in them with no outcome yet that were not ``asked``."""
    open_: set[JobId] = set()
    for name, group in groups.items():
        if not group.members:
            open_.add(name)  # not recorded (yet): whoever records it is not this reader
        open_.update(m.job for m in group.members if m.outcome is None and m.job not in asked)
    return GateReading(gates(_ordered(groups)), frozenset(open_), groups, asked)


def _by_group(members: Iterable[JobSummary]) -> dict[JobId, list[JobSummary]]:
    """Members by what others wait for them by: their sweep's name, or their own."""
    out: dict[JobId, list[JobSummary]] = {}
    for member in members:
        out.setdefault(JobId(member.sweep) if member.sweep is not None else member.job, []).append(member)
    return out


def _ordered_groups(groups: Mapping[JobId, Group]) -> list[Group]:
    """The groups so that each comes after those it waits for (the given order where free; a cycle, which
    no recorded job can make, is broken where it is found)."""
    done: dict[JobId, Group] = {}
    visiting: set[JobId] = set()

    def visit(name: JobId) -> None:
        if name in done or name in visiting or name not in groups:
            return
        visiting.add(name)
        for dep in groups[name].dependencies:
            visit(dep.on)
        visiting.discard(name)
        done[name] = groups[name]

    for name in groups:
        visit(name)
    return list(done.values())


def _ordered(groups: Mapping[JobId, Group]) -> list[Gated]:
    return [Gated(JobFacts.of(member), group.name, group.dependencies)
            for group in _ordered_groups(groups) for member in group.members]


__all__ = ["Blocked", "GateReading", "Gates", "Group", "PipelineReport", "PipelineStep", "RecordedPipeline"]
