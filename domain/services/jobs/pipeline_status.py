"""``status NAME`` of a pipeline, and ``list``'s one row for it: from its jobs' summaries, never a fold.

A pipeline is what ``Gates.pipeline`` finds: the jobs named ``NAME.<step>`` (a sweep step's elements
``NAME.<step>-<i>``) whose first event says they are steps of ``NAME``. Its standing costs one summaries
query (by the name's prefix), one first event read per step (kept), and one ask of the locks of the jobs
not settled: a 3-step pipeline with a 1,000-element sweep costs what ``status`` of that sweep costs, give
or take three short reads. The dependency rule (dependencies.py) says which jobs wait or are blocked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from dunscaith.domain.model.jobs.attendance import unattended_here
from dunscaith.domain.model.jobs.dependencies import (
    BLOCKED,
    WAITING,
    Blocked,
    PipelineEnd,
    Readiness,
    StepEnd,
    Waiting,
    pipeline_end,
    state_word,
    step_end,
    step_line,
)
from dunscaith.domain.model.jobs.dependencies import JobFacts as _Facts
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.names import pipeline_candidate as candidate
from dunscaith.domain.model.jobs.record import LoopHealth
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.model.jobs.summary import JobSummary, Summarised
from dunscaith.domain.model.jobs.waits import Dependency
from dunscaith.domain.services.jobs.gates import Gates, RecordedPipeline
from dunscaith.domain.services.jobs.sweep_members import by_index
from dunscaith.ports.job_store import JobStore, RecordDamaged, StoreError, UnknownJob

GOING = "going"  # a step (or a pipeline) whose jobs are in several states, not all ended


@dataclass(frozen=True, slots=True)
class StepStanding:
    """One step now: its job's (or every element's) summary and what the rule says of those held back."""

    step: str
    job: JobId  # PIPELINE.STEP: the job's name, or the sweep's
    is_sweep: bool
    members: tuple[JobSummary, ...]  # the job, or every element by index
    answers: Mapping[JobId, Readiness]  # the rule's answer for each member not started (none: started)
    waits_for: tuple[Dependency, ...]  # what the step records it waits for

    def word(self, member: JobSummary) -> str:
        """A member's state: ``waiting`` or ``blocked`` for one its gate holds back, else its summary's."""
        return state_word(member, self.answers.get(member.job))

    @property
    def words(self) -> list[str]:
        return [self.word(m) for m in self.members]

    @property
    def end(self) -> StepEnd:
        return step_end(self.step, (_Facts.of(m) for m in self.members), self.answers)

    @property
    def state(self) -> str:
        """One word: the state every member is in when they agree (``waiting``, ``running``, ``succeeded``...),
        else how the step ends (``failed``, ``blocked``) once it has, else ``going``."""
        words = set(self.words)
        if len(words) == 1:
            return words.pop()
        end = self.end
        return end.state if end.ended else GOING

    @property
    def held_back(self) -> Readiness | None:
        """What holds back the first member its gate holds back (Waiting or Blocked), or None."""
        for member in self.members:
            answer = self.answers.get(member.job)
            if isinstance(answer, Waiting | Blocked) and member.attempts == 0 and member.outcome is None:
                return answer
        return None

    @property
    def line(self) -> str:
        """``study.reduce  blocked by study.train (study.train-12 failed)`` (dependencies.step_line)."""
        return step_line(self.job, self.members, self.answers)


@dataclass(frozen=True, slots=True)
class PipelineStanding(Summarised):
    """Where a pipeline stands now, as its jobs' summaries and the dependency rule say."""

    name: JobId
    steps: tuple[StepStanding, ...]  # each after what it waits for
    held: frozenset[JobId]  # the jobs, sweeps (and the pipeline) whose lock is held now: a live supervisor

    @property
    def members(self) -> list[JobSummary]:
        return [m for step in self.steps for m in step.members]

    @property
    def summaries(self) -> list[JobSummary]:
        return self.members

    @property
    def ending(self) -> PipelineEnd | None:
        """How it ended (exit code, summary line) once every step has ended or is blocked; None before."""
        return pipeline_end(self.name, [step.end for step in self.steps])

    @property
    def state(self) -> str:
        """``succeeded`` (every step did), ``failed`` (it ended and some job did not succeed), ``blocked``
        (it ended with steps blocked and none failed), else the one state its steps share, else ``going``."""
        ending = self.ending
        if ending is not None:
            if ending.exit_code == 0:
                return "succeeded"
            return "failed" if any(step.end.not_success for step in self.steps) else BLOCKED
        states = {step.state for step in self.steps}
        return states.pop() if len(states) == 1 else GOING

    @property
    def unattended(self) -> tuple[JobSummary, ...]:
        """The jobs with work left (a waiting one too: it has yet to start; not a blocked one) and no
        supervisor: neither their lock nor their sweep's is held, nor the pipeline's (its supervisor holds back
        the steps that wait, with no lock of theirs). ``supervise NAME`` takes them."""
        if self.name in self.held:
            return ()
        return tuple(
            m
            for step in self.steps
            for m in step.members
            if m.problem is None
            and step.word(m) != BLOCKED
            and unattended_here(
                m.settled, LoopHealth(m.job in self.held, None), m.sweep is not None and m.sweep in self.held
            )
        )


class PipelineStatus:
    def __init__(self, store: JobStore) -> None:
        self._store = store
        self._gates = Gates(store)

    def recorded(self, name: str) -> RecordedPipeline | None:
        """The pipeline recorded under ``name`` (its steps and their jobs' summaries), or None."""
        return self._gates.pipeline(name)

    def of(self, name: str) -> PipelineStanding | None:
        """Where the pipeline ``name`` stands, or None when no job records it is a step of one so named."""
        recorded = self._gates.pipeline(name)
        return self.standing(recorded) if recorded is not None else None

    def step_of(self, job: JobId) -> str | None:
        """The pipeline ``job``'s first event says it is a step of (None: of none, or its record does not
        read): one read, no fold of the rest."""
        try:
            record = self._store.read(job)
            spec = fold(replace(record, events=record.events[:1])).spec
        except (UnknownJob, StoreError, RecordDamaged, JobsError):
            return None
        return spec.step_of.pipeline if spec.step_of is not None else None

    def blocked(self, recorded: RecordedPipeline) -> frozenset[JobId]:
        """The jobs of a pipeline already read that the rule says are blocked (never created)."""
        return frozenset(
            job for job, answer in self._gates.report(recorded).answers.items() if isinstance(answer, Blocked)
        )

    def standing(self, recorded: RecordedPipeline) -> PipelineStanding:
        """The standing of a pipeline already read: the rule asked once for all its jobs (``Gates.report``),
        and the locks of its jobs not settled, its sweep steps' and its own asked at once."""
        answers = self._gates.report(recorded).answers
        steps = tuple(
            StepStanding(
                step.step,
                step.job,
                step.group.is_sweep,
                tuple(by_index(step.group.members)),
                {m.job: answers[m.job] for m in step.group.members if m.job in answers},
                step.group.dependencies,
            )
            for step in recorded.steps
        )
        members = recorded.members()
        open_ = [m.job for m in members if not m.settled]
        sweeps = sorted({m.sweep for m in members if m.sweep is not None and not m.settled})
        healths = self._store.healths([*open_, *sweeps, recorded.name]) if open_ else {}
        held = frozenset(job for job, health in healths.items() if health.held)
        return PipelineStanding(recorded.name, steps, held)


def pipeline_members(store: JobStore) -> Callable[[JobId], list[JobSummary] | None]:
    """Every job of the pipeline a name names, step by step (None: no pipeline so named): what
    ``SweepMembers`` is given to resolve a pipeline's name."""
    gates = Gates(store)

    def members(name: JobId) -> list[JobSummary] | None:
        recorded = gates.pipeline(name)
        return [m for step in recorded.steps for m in by_index(step.group.members)] if recorded is not None else None

    return members


__all__ = ["GOING", "WAITING", "PipelineStanding", "PipelineStatus", "StepStanding", "candidate", "pipeline_members"]
