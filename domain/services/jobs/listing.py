"""List and the Unattended notice: from the summaries the store keeps, never by folding every record.

``list`` asks the store for the summaries it shows (filtered, newest first, a page at a time) and folds
only those records, so a page costs the same with a thousand jobs or a hundred thousand; a record that
does not read is listed as damaged, never a reason to stop (issue 10). The notice asks for the records
not settled (an index) and probes only their locks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.names import pipeline_candidate as candidate
from dunscaith.domain.model.jobs.record import LoopHealth
from dunscaith.domain.model.jobs.state import JobState, fold
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery, UnattendedJob
from dunscaith.domain.services.jobs.status import JobView, judge
from dunscaith.domain.services.jobs.sweep_members import SweepMembers
from dunscaith.domain.services.jobs.sweep_status import SweepStanding, SweepStatus
from dunscaith.ports.clock import Clock
from dunscaith.ports.job_store import JobStore, RecordDamaged

if TYPE_CHECKING:  # the dependency rule's modules are imported only once a job waits or a name may be a step's
    from dunscaith.domain.model.jobs.dependencies import Readiness
    from dunscaith.domain.services.jobs.pipeline_status import PipelineStanding, PipelineStatus

# list asks the locks of this many jobs at once: a page in one query, memory still flat for --json
_LOCKS_AT_ONCE = 100


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A listed job whose record does not read: listed with why, never dropped."""

    job: JobId
    problem: str


@dataclass(frozen=True, slots=True)
class SweepRow:
    """A sweep as ``list``'s one row: its elements' view (summaries only) and its first element, folded
    (the command line the row shows; None when that record does not read)."""

    view: SweepStanding
    first: JobState | None


@dataclass(frozen=True, slots=True)
class PipelineRow:
    """A pipeline as ``list``'s one row: its steps' standing (summaries only) and its first step's first job,
    folded (the command line the row shows; None when that record does not read)."""

    view: PipelineStanding
    first: JobState | None


@dataclass(slots=True)
class Covered:
    """How many of the jobs a query matches the rows given so far stand for (a sweep's row: its elements; a
    pipeline's: every job of its steps)."""

    jobs: int = 0
    rows: int = 0
    sweeps: set[str] = field(default_factory=set)
    in_pipelines: set[str] = field(default_factory=set)  # the jobs a pipeline's row stands for
    not_steps: set[str] = field(default_factory=set)  # jobs and sweeps whose first event says: no pipeline's


def held_back(view: JobView, answer: Readiness) -> JobView:
    """``view`` of a job that waits (a pipeline's step), not started: ``waiting`` or ``blocked`` as the rule
    says, not its record's ``recorded``; a blocked one is not Unattended (it runs only once what blocked it
    runs again)."""
    from dunscaith.domain.model.jobs.dependencies import BLOCKED, WAITING, Blocked, Waiting

    if not isinstance(answer, Waiting | Blocked):
        return view
    return replace(view, label=WAITING if isinstance(answer, Waiting) else BLOCKED, gate=answer,
                   unattended=view.unattended and isinstance(answer, Waiting))


class JobListing:
    def __init__(self, store: JobStore, clock: Clock, poll: float, delivering: bool = False) -> None:
        self._store = store
        self._clock = clock
        self._poll = poll
        self._delivering = delivering

    def now(self) -> datetime:
        """The time the views are judged at (what ``--since 2d`` counts back from, what elapsed runs to)."""
        return self._clock.now()

    def views(self, query: SummaryQuery) -> Iterator[JobView | Unreadable]:
        """The jobs ``query`` asks for, newest first, as the store streams their summaries: each record
        folded as it is reached (one at a time: memory flat). A record that does not read is given as
        Unreadable, unless the query filters (a state, cluster or time it cannot be said to have)."""
        now = self._clock.now()
        page: list[JobSummary] = []
        for summary in self._store.summaries(query):
            page.append(summary)
            if len(page) == _LOCKS_AT_ONCE:
                yield from self._judged(page, query, now)
                page = []
        yield from self._judged(page, query, now)

    def _judged(self, page: list[JobSummary], query: SummaryQuery, now: datetime) -> Iterator[JobView | Unreadable]:
        """A few summaries' jobs, their locks asked at once (one query on a server), each record folded
        (a page at a time: the rule is asked once for the page's jobs that wait)."""
        sweeps = {s.sweep for s in page if s.sweep is not None and not s.settled}  # their elements' locks too
        healths = self._store.healths([*(s.job for s in page), *sorted(sweeps)]) if page else {}
        read: list[tuple[JobSummary, JobState | Unreadable]] = []  # in the page's order
        for summary in page:
            try:
                read.append((summary, fold(self._store.read(summary.job))))
            except (JobsError, RecordDamaged) as exc:  # its damage only: every other job still lists
                read.append((summary, Unreadable(summary.job, f"record does not read: {exc}")))
        gated = self._gates([(summary, state) for summary, state in read if isinstance(state, JobState)])
        for summary, state in read:
            if isinstance(state, Unreadable):
                if not query.filtered:
                    yield state
                continue
            health = healths.get(summary.job, LoopHealth(held=False, last_loop=None))
            sweep = healths.get(summary.sweep) if summary.sweep is not None else None
            view = judge(state, health, now, self._poll, self._delivering, sweep is not None and sweep.held)
            answer = gated.get(summary.job)
            yield view if answer is None else held_back(view, answer)

    def _gates(self, folded: list[tuple[JobSummary, JobState]]) -> dict[JobId, Readiness]:
        """The rule's answer for the jobs of a page not started that wait for others, asked at once (one
        summaries query per group waited for); none asked when none waits."""
        waiting = [s for s, state in folded if state.spec.waits and not state.attempts and state.outcome is None]
        if not waiting:
            return {}
        from dunscaith.domain.services.jobs.gates import Gates

        return Gates(self._store).answers(waiting)

    def rows(self, query: SummaryQuery, covered: Covered, *, expand: bool = False
             ) -> Iterator[JobView | Unreadable | SweepRow | PipelineRow]:
        """``views``, but a sweep's elements make ONE row (where its newest element would be), and so do a
        pipeline's jobs, unless ``expand``; ``query.limit`` then counts rows. A sweep's row reads its
        elements' summaries (one query) and folds one record, its first element's; a pipeline's reads its
        jobs' summaries (one query) and one first event per step; a job of its own is as in ``views``.
        ``covered`` counts the rows given and the jobs matching ``query`` they stand for."""
        if expand:
            for view in self.views(query):
                covered.rows += 1
                covered.jobs += 1
                yield view
            return
        now = self._clock.now()
        members, sweeps = SweepMembers(self._store), SweepStatus(self._store)
        pipelines: list[PipelineStatus] = []  # made once a name may be a pipeline step's
        page: list[JobSummary] = []
        for summary in self._store.summaries(replace(query, limit=None)):
            if query.limit is not None and covered.rows >= query.limit:
                break
            if summary.job in covered.in_pipelines:
                continue  # its pipeline's row is given already
            pipeline = self._pipeline_of(summary, pipelines, covered)
            if pipeline is not None:
                yield from self._judged(page, query, now)
                page = []
                covered.rows += 1
                covered.jobs += sum(1 for m in pipeline.members if query.matches(m))
                yield PipelineRow(pipeline, self._first(pipeline.members[:1]))
                continue
            if summary.sweep is None:
                page.append(summary)
                covered.rows += 1
                covered.jobs += 1
                if len(page) == _LOCKS_AT_ONCE:
                    yield from self._judged(page, query, now)
                    page = []
                continue
            if summary.sweep in covered.sweeps:
                continue  # its row is given already
            covered.sweeps.add(summary.sweep)
            yield from self._judged(page, query, now)
            page = []
            elements = members.elements(summary.sweep, include_pruned=query.include_pruned)
            if not elements:  # a store that cannot ask for one sweep's elements: the element is its own row
                page.append(summary)
                covered.rows += 1
                covered.jobs += 1
                continue
            covered.rows += 1
            covered.jobs += sum(1 for e in elements if query.matches(e))
            yield SweepRow(sweeps.view(summary.sweep, elements), self._first(elements))
        yield from self._judged(page, query, now)

    def _pipeline_of(self, summary: JobSummary, made: list[PipelineStatus], covered: Covered
                     ) -> PipelineStanding | None:
        """The pipeline ``summary``'s job is a step (or a step's element) of, its jobs then covered; None for a
        job of no pipeline. Only a name ``NAME.STEP`` (or an element ``NAME.STEP-<i>``) is asked: its first
        event (once per job or sweep) says whether it is a step of NAME; then, once per pipeline, one
        summaries query and one first event per step, never a fold."""
        name = candidate(summary.job, summary.sweep)
        group = summary.sweep if summary.sweep is not None else summary.job
        if name is None or group in covered.not_steps:
            return None
        if not made:
            from dunscaith.domain.services.jobs.pipeline_status import PipelineStatus

            made.append(PipelineStatus(self._store))
        pipelines = made[0]
        recorded = pipelines.recorded(name) if pipelines.step_of(summary.job) == name else None
        jobs = {m.job for m in recorded.members()} if recorded is not None else set()
        if recorded is None or summary.job not in jobs:
            covered.not_steps.add(group)  # a job (or sweep) named like a step, recorded as no step of it
            return None
        covered.in_pipelines |= jobs
        return pipelines.standing(recorded)

    def _first(self, elements: list[JobSummary]) -> JobState | None:
        try:
            return fold(self._store.read(elements[0].job)) if elements else None
        except (JobsError, RecordDamaged):
            return None

    def count(self, query: SummaryQuery) -> int:
        return self._store.count(query)

    def unattended(self) -> list[UnattendedJob]:
        """Jobs with work left and no supervisor, by name, state and sweep: the records not settled (an
        index) whose lock no one holds, asked of the store at once (one query on a server)."""
        return self._store.unattended_names()

    def pipelines_of(self, jobs: list[UnattendedJob], known: Mapping[JobId, PipelineStanding] | None = None
                     ) -> tuple[dict[JobId, JobId], dict[JobId, int]]:
        """Of ``jobs``, those that are a pipeline's (by job: the pipeline's name), and how many jobs of each
        such pipeline are Unattended as ``status NAME`` counts them: none while its own lock is held (its
        live supervisor holds back the steps that wait, with no lock of theirs), and never a blocked job
        (it will not run unless what blocked it runs again). Only a name ``NAME.STEP`` (or an element's) is
        asked, once per NAME. ``known``: pipelines whose standing the command read already (``list``'s
        rows, ``status NAME``), by name: counted from it (``PipelineStanding.unattended``), not read again."""
        groups = {(job.sweep if job.sweep is not None else job.job): job for job in jobs
                  if candidate(job.job, job.sweep) is not None}
        of, counts = _counted(groups.values(), known or {})
        groups = {group: job for group, job in groups.items() if job.job not in of}
        if not groups:
            return of, counts
        from dunscaith.domain.services.jobs.pipeline_status import PipelineStatus

        pipelines = PipelineStatus(self._store)
        names = set()
        for job in groups.values():  # one first event per job or sweep named like a step: is it one?
            name = candidate(job.job, job.sweep)
            if name is not None and pipelines.step_of(job.job) == name:
                names.add(name)
        for name in sorted(names):
            recorded = pipelines.recorded(name)
            if recorded is None:
                continue
            mine = {member.job for member in recorded.members()}
            of.update((job, recorded.name) for job in mine)
            if self._store.health(recorded.name).held:
                counts[recorded.name] = 0  # its live supervisor holds back what waits
                continue
            blocked = pipelines.blocked(recorded)  # the rule over the summaries already read: no more reads
            counts[recorded.name] = sum(1 for job in jobs if job.job in mine and job.job not in blocked)
        return of, counts


def _counted(jobs: Iterable[UnattendedJob], known: Mapping[JobId, PipelineStanding]
             ) -> tuple[dict[JobId, JobId], dict[JobId, int]]:
    """``pipelines_of`` for the pipelines whose standing was read already: each of their jobs (by job: the
    pipeline's name), and their Unattended jobs counted as ``status NAME`` counts them."""
    of: dict[JobId, JobId] = {}
    counts: dict[JobId, int] = {}
    names = {candidate(job.job, job.sweep) for job in jobs}
    for name, standing in known.items():
        if name in names:
            of.update((member.job, standing.name) for member in standing.members)
            counts[standing.name] = len(standing.unattended)
    return of, counts
