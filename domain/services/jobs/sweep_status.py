"""``status NAME`` of a sweep, and ``list``'s one row for it: from the elements' summaries, never a fold.

A sweep of a thousand elements costs one summaries query and, for its elements not settled, one ask of
their locks (one query on a server): what ``status`` of one job costs, give or take the rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dunscaith.domain.model.jobs.attendance import unattended_here
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import LoopHealth
from dunscaith.domain.model.jobs.state import OutcomeKind
from dunscaith.domain.model.jobs.summary import JobSummary, Summarised
from dunscaith.domain.services.jobs.sweep_members import SweepMembers
from dunscaith.ports.job_store import JobStore, UnknownJob

if TYPE_CHECKING:  # the dependency rule's modules are imported only once a sweep waits or a name is a pipeline's
    from dunscaith.domain.model.jobs.dependencies import Readiness
    from dunscaith.domain.services.jobs.pipeline_status import PipelineStanding

_BLOCKED = "blocked"  # dependencies.BLOCKED: the word of an element its gate blocks


@dataclass(frozen=True, slots=True)
class SweepStanding(Summarised):
    """Where a sweep stands now, as the store summarises its elements: what ``status NAME`` and ``list``'s
    row of it show (not the live view of its supervision: ports.job_progress.SweepSupervisionView)."""

    sweep: JobId
    elements: tuple[JobSummary, ...]  # every element, by index
    held: frozenset[JobId]  # the elements whose lock is held now (a live supervisor or command)
    state: str | None = None  # the state ``listed`` was chosen by (``status NAME --state failed``)
    sweep_held: bool = False  # the sweep's lock is held: a live supervisor of it holds every element not settled
    # the dependency rule's answer for each element not started, when the sweep waits (a pipeline's step)
    answers: Mapping[JobId, Readiness] = field(default_factory=dict)

    def word(self, element: JobSummary) -> str:
        """An element's state: ``waiting`` or ``blocked`` when its gate holds it back, else its summary's."""
        if not self.answers:
            return element.state
        from dunscaith.domain.model.jobs.dependencies import state_word

        return state_word(element, self.answers.get(element.job))

    @property
    def listed(self) -> tuple[JobSummary, ...]:
        """The elements status lists: those in ``state``, or, without one, each that has not succeeded."""
        if self.state is not None:
            return tuple(s for s in self.elements if s.state == self.state)
        return tuple(s for s in self.elements if s.outcome != OutcomeKind.SUCCEEDED)

    @property
    def unattended(self) -> tuple[JobSummary, ...]:
        """The elements with work left and no supervisor (their lock and the sweep's free): ``supervise NAME``
        takes them. While the sweep's supervisor lives, none: those it has not started wait for a slot. Never
        a blocked element (a sweep that waits): it will not run unless what blocked it runs again."""
        return tuple(s for s in self.elements if s.problem is None and self.word(s) != _BLOCKED
                     and unattended_here(s.settled, LoopHealth(s.job in self.held, None), self.sweep_held))

    @property
    def summaries(self) -> tuple[JobSummary, ...]:
        return self.elements


class SweepStatus:
    def __init__(self, store: JobStore) -> None:
        self._store = store
        self._members = SweepMembers(store, self._pipeline_jobs)

    def of(self, sweep: JobId, state: str | None = None) -> SweepStanding:
        """Every element of ``sweep`` (one summaries query) and the locks of those not settled; UnknownJob
        when no element of it is recorded (NotASweep, with ``state``, when ``sweep`` is a job of its own)."""
        elements = self._members.elements(sweep)
        if not elements:
            if state is not None:
                self._members.resolve(sweep, state)  # NotASweep for a job or a pipeline, UnknownJob for nothing
            raise UnknownJob(f"no job or sweep named {sweep} is recorded")
        return self.view(sweep, elements, state)

    def members(self, sweep: JobId) -> list[JobSummary]:
        """Every element of ``sweep`` by index (none: it is no sweep's name), without asking any lock."""
        return self._members.elements(sweep)

    def view(self, sweep: JobId, elements: list[JobSummary], state: str | None = None) -> SweepStanding:
        """The view of elements already read (``list``'s row): only the locks of those not settled are asked,
        with the sweep's own (sweep_lock.py) in the same question."""
        open_ = [s.job for s in elements if not s.settled]
        healths = self._store.healths([*open_, sweep]) if open_ else {}
        sweep_health = healths.pop(sweep, None)
        held = frozenset(job for job, health in healths.items() if health.held)
        # a sweep that waits (a pipeline's step, submit --after): what holds back its elements not started
        answers = self._answers(elements) if any(s.attempts == 0 and s.outcome is None for s in elements) else {}
        return SweepStanding(sweep, tuple(elements), held, state, sweep_health is not None and sweep_health.held,
                             answers)

    def _answers(self, elements: list[JobSummary]) -> dict[JobId, Readiness]:
        from dunscaith.domain.services.jobs.gates import Gates

        return Gates(self._store).answers(elements)

    def pipeline(self, name: JobId) -> PipelineStanding | None:
        """The pipeline ``name``'s standing (pipeline_status.py), or None when none is recorded so named."""
        from dunscaith.domain.services.jobs.pipeline_status import PipelineStatus

        return PipelineStatus(self._store).of(name)

    def _pipeline_jobs(self, name: JobId) -> list[JobSummary] | None:
        """Every job of the pipeline ``name`` (None: none so named): the resolution rule's last step."""
        from dunscaith.domain.services.jobs.pipeline_status import pipeline_members

        return pipeline_members(self._store)(name)
