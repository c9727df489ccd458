"""The dependency rule: whether a job that waits for other jobs may be created now, and how a pipeline ends.

A job that waits (``submit --after``, a pipeline's step) is recorded at once and not created until the rule
says ``ready``; until then it costs no scheduler query: the rule reads only what the dependencies' records
say (their summaries, ``JobFacts.of``). Pure: the facts come in, an answer goes out (docs/pipelines.md).

- ``after A``: ready once every job of A succeeded (A a sweep: every element); blocked once one of them
  ended without success (failed, cancelled, refused, escalated, abandoned) or is itself blocked.
- ``after_any A``: ready once every job of A has its outcome, whatever it is, or is blocked.
- ``after_each S`` (element i of a sweep): as ``after`` of element i of sweep S alone.

Blocked is not final: ``resubmit NAME --failed`` withdraws a failed element's outcome (it reads as no
outcome again), so what it blocked waits again, and becomes ready once the new attempt succeeds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.exit_codes import ExitCode
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import OutcomeKind
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.model.jobs.sweep_counts import counts_words
from dunscaith.domain.model.jobs.waits import Dependency, DependencyKind

BLOCKED = "blocked"  # the word ``Blocked.why`` says of a dependency that is itself blocked


@dataclass(frozen=True, slots=True)
class JobFacts:
    """What the rule reads of one job: its name, its outcome, its index in its sweep, whether it started
    (has an attempt: it is past its gate) and, for one not started, whether its own dependencies block it."""

    job: JobId
    outcome: OutcomeKind | None = None  # None: no outcome yet (or a resubmit withdrew it)
    index: int | None = None  # its index in its sweep; None for a job of its own
    started: bool = False  # an attempt was recorded: the rule no longer gates it
    blocked: Blocked | None = None  # never created because a dependency of its own blocked it

    @classmethod
    def of(cls, summary: JobSummary) -> JobFacts:
        """From the summary the store keeps with every append (no fold of the record)."""
        outcome = OutcomeKind(summary.outcome) if summary.outcome is not None else None
        return cls(summary.job, outcome, summary.sweep_index, summary.attempts > 0)


@dataclass(frozen=True, slots=True)
class Waiting:
    """A dependency has no outcome yet: nothing to do but wait (no scheduler query for it)."""

    on: JobId  # the first dependency, in the recorded order, still waited for

    def line(self) -> str:
        return f"waiting for {self.on}"


@dataclass(frozen=True, slots=True)
class Ready:
    """Every dependency is as asked: the job may be created (held, confirmed, released as any job)."""

    def line(self) -> str:
        return "ready"


@dataclass(frozen=True, slots=True)
class Blocked:
    """A dependency ended (or will never run) in a way that means this job must not run: nothing is created."""

    by: JobId  # the dependency as recorded: a job's or a sweep's name
    why: str  # its outcome's word (failed, cancelled...), or BLOCKED
    job: JobId  # the job whose outcome it is: ``by``, or the element of the sweep ``by``

    def line(self) -> str:
        """``blocked by study.train (study.train-12 failed)``, as ``status`` says it."""
        what = f"{self.job} {self.why}" if self.job != self.by else self.why
        return f"blocked by {self.by} ({what})"


Readiness = Waiting | Ready | Blocked
READY = Ready()


def readiness(
    dependencies: Sequence[Dependency], facts: Mapping[JobId, Sequence[JobFacts]], index: int | None = None
) -> Readiness:
    """Whether a job that waits for ``dependencies`` may be created now.

    ``facts``: by each dependency's name, the facts of its jobs (one for a job, every element for a sweep);
    an element may also be given under its own name (``S-i``), which ``after_each`` then reads at once.
    ``index``: the job's own index in its sweep, which ``after_each`` needs. A dependency with no facts (not
    recorded, or pruned) blocks: it will never end. The first dependency that blocks, in the recorded order,
    is the one named; else the first still waited for."""
    return _all(dependencies, lambda dep: _dependency(dep, facts, index))


def _all(dependencies: Sequence[Dependency], answer_of: Callable[[Dependency], Readiness]) -> Readiness:
    waiting: Waiting | None = None
    for dep in dependencies:
        answer = answer_of(dep)
        if isinstance(answer, Blocked):
            return answer
        if isinstance(answer, Waiting) and waiting is None:
            waiting = answer
    return waiting or READY


def _dependency(dep: Dependency, facts: Mapping[JobId, Sequence[JobFacts]], index: int | None) -> Readiness:
    jobs = facts.get(dep.on, ())
    if dep.kind is DependencyKind.AFTER_EACH:
        if index is None:
            raise BadSpec(f"after_each {dep.on}: only an element of a sweep waits for element i of another")
        own = facts.get(JobId(f"{dep.on}-{index}"))  # element_name(dep.on, index), when given by its name
        jobs = [job for job in (own if own is not None else jobs) if job.index == index]
        if not jobs:
            return Blocked(dep.on, f"has no element {index}", dep.on)
    if not jobs:
        return Blocked(dep.on, "not recorded", dep.on)
    return _one(dep, jobs)


def _one(dep: Dependency, jobs: Iterable[JobFacts]) -> Readiness:
    waiting: Waiting | None = None
    for job in sorted(jobs, key=lambda j: (j.index is None, j.index or 0, j.job)):
        if job.blocked is not None and job.outcome is None:
            if dep.kind is DependencyKind.AFTER_ANY:
                continue  # it will never run: that is its end, as far as after_any goes
            return Blocked(dep.on, BLOCKED, job.job)
        if job.outcome is None:
            waiting = waiting or Waiting(dep.on)
        elif job.outcome is not OutcomeKind.SUCCEEDED and dep.kind is not DependencyKind.AFTER_ANY:
            return Blocked(dep.on, str(job.outcome), job.job)
    return waiting or READY


@dataclass(frozen=True, slots=True)
class Gated:
    """One job of a pipeline (or one waiting on its own) with its dependencies, in an order where each
    comes after what it waits for (``PipelineSpec.order``)."""

    facts: JobFacts
    group: JobId  # the name others wait for it by: its sweep's, or its own
    dependencies: tuple[Dependency, ...] = ()


def gates(jobs: Sequence[Gated]) -> dict[JobId, Readiness]:
    """For every job not started and without an outcome, the rule's answer, a blocked job blocking in turn
    what waits for it (so a failure three steps up blocks the whole chain below it at once).

    ``jobs`` in dependency order (``PipelineSpec.order``): a job's dependencies come before it, so what blocks
    them is known when it is asked. Jobs of one group are one sweep. Every job's facts are known from the
    start, so a job listed out of order is never taken for one not recorded: only what blocks it may be
    seen a pass late. Each dependency is judged once per group and kind (``after`` of a 10,000-element sweep
    by each of 10,000 elements costs one judgement, not 10^8), ``after_each`` once per element."""
    groups: dict[JobId, list[JobFacts]] = {}
    where: dict[JobId, tuple[JobId, int]] = {}
    for gated in jobs:
        members = groups.setdefault(gated.group, [])
        where[gated.facts.job] = gated.group, len(members)
        members.append(gated.facts)
    by_name: dict[JobId, list[JobFacts]] = {name: [groups[group][at]] for name, (group, at) in where.items()}
    view = _View(groups, by_name)
    judged: dict[tuple[JobId, DependencyKind], Readiness] = {}

    def answer_of(dep: Dependency, index: int | None) -> Readiness:
        if dep.kind is DependencyKind.AFTER_EACH:
            return _dependency(dep, view, index)
        key = (dep.on, dep.kind)
        if key not in judged:
            judged[key] = _dependency(dep, view, index)
        return judged[key]

    answers: dict[JobId, Readiness] = {}
    for gated in jobs:
        facts = gated.facts
        if not facts.started and facts.outcome is None:
            answer = _all(gated.dependencies, partial(answer_of, index=facts.index))
            answers[facts.job] = answer
            if isinstance(answer, Blocked):
                group, at = where[facts.job]
                groups[group][at] = by_name[facts.job][0] = replace(facts, blocked=answer)
    return answers


class _View(Mapping[JobId, Sequence[JobFacts]]):
    """The facts by group (a sweep's or a job's name) and, for ``after_each``, by each element's own name."""

    def __init__(self, groups: dict[JobId, list[JobFacts]], by_name: dict[JobId, list[JobFacts]]) -> None:
        self._groups, self._by_name = groups, by_name

    def __getitem__(self, key: JobId) -> Sequence[JobFacts]:
        return self._groups[key] if key in self._groups else self._by_name[key]

    def __iter__(self) -> Iterator[JobId]:
        return iter(self._groups)

    def __len__(self) -> int:
        return len(self._groups)


# --- how a pipeline ends -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StepEnd:
    """Where one step stands, from its jobs' facts (after ``gates``): how many succeeded, ended otherwise,
    are blocked, and are still to end."""

    step: str
    succeeded: int
    not_success: int
    blocked: int
    going: int

    @property
    def ended(self) -> bool:
        return self.going == 0

    @property
    def state(self) -> str:
        """One word: succeeded, failed (some job ended without success), blocked, or going."""
        if self.going:
            return "going"
        if self.not_success:
            return "failed"
        return BLOCKED if self.blocked else "succeeded"


def step_end(step: str, jobs: Iterable[JobFacts], answers: Mapping[JobId, Readiness]) -> StepEnd:
    counts = [0, 0, 0, 0]
    for job in jobs:
        if job.outcome is OutcomeKind.SUCCEEDED:
            counts[0] += 1
        elif job.outcome is not None:
            counts[1] += 1
        elif isinstance(answers.get(job.job), Blocked):
            counts[2] += 1
        else:
            counts[3] += 1
    return StepEnd(step, *counts)


@dataclass(frozen=True, slots=True)
class PipelineEnd:
    """How a pipeline ended, once every step has: the exit code of its supervision and its summary line."""

    exit_code: ExitCode
    line: str


def pipeline_end(name: str, steps: Sequence[StepEnd]) -> PipelineEnd | None:
    """None while a step is still going (a job with no outcome that is not blocked). Else exit 0 only when
    every step succeeded (every job, every element), 1 otherwise (some step failed or is blocked, as a sweep
    ends 1 when some element did not succeed: docs/exit-codes.md); the line names each step that did not."""
    if not steps or any(not step.ended for step in steps):
        return None
    bad = [step for step in steps if step.state != "succeeded"]
    if not bad:
        return PipelineEnd(ExitCode.SUCCEEDED, f"pipeline {name}: all {len(steps)} steps succeeded")
    said = ", ".join(f"{step.step} {step.state}" for step in bad)
    return PipelineEnd(
        ExitCode.NOT_SUCCESS,
        f"pipeline {name}: {len(steps) - len(bad)} of {len(steps)} steps succeeded; {said} (dunscaith status {name})",
    )


# --- how status says a step ----------------------------------------------------------------------------

WAITING = "waiting"  # the state word of a job not created because what it waits for has not ended


def state_word(summary: JobSummary, answer: Readiness | None) -> str:
    """A job's state as ``status`` and ``list`` would say it in a pipeline: ``waiting`` or ``blocked`` for a
    job its gate holds back (its record says only ``recorded``), else its summary's own word."""
    if summary.attempts == 0 and summary.outcome is None:
        if isinstance(answer, Blocked):
            return BLOCKED
        if isinstance(answer, Waiting):
            return WAITING
    return summary.state


def step_line(job: JobId, summaries: Sequence[JobSummary], answers: Mapping[JobId, Readiness]) -> str:
    """One line of ``status PIPELINE`` for a step: ``study.reduce  blocked by study.train (study.train-12
    failed)``, ``study.train  100 elements: 97 succeeded, 3 failed``; a sweep's counts in sweep_counts' words
    and order, then what blocks or holds back its first element that waits."""
    words = [state_word(s, answers.get(s.job)) for s in summaries]
    held = next(
        (
            answers[s.job]
            for s in summaries
            if isinstance(answers.get(s.job), Waiting | Blocked) and s.attempts == 0 and s.outcome is None
        ),
        None,
    )
    why = f" ({held.line()})" if held is not None else ""
    if len(summaries) == 1 and summaries[0].sweep is None:
        said = held.line() if held is not None else words[0]
        return f"{job}  {said}"
    return f"{job}  {len(summaries):,} elements: {counts_words(words)}{why}"
