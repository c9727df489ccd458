"""A job that waits for others (``submit --after``), not created yet, waits in the pass loop: its gate
(``supervise_job._Gate``) is read before each pass, every ``GATE_POLL``, and says in the live view what it
waits for, once each time that changes; it ends blocked, outstanding at ``reconcile``'s bound, drained on a
signal, or lets the job's supervision begin."""

from __future__ import annotations

from typing import cast

from dunscaith.domain.model.jobs.dependencies import Blocked, Ready, Waiting
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.settlement import Outstanding
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.services.jobs.gates import Gates
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.supervise import Ending, SupervisionEnd
from dunscaith.domain.services.jobs.supervise_job import GATE_POLL, _Gate
from dunscaith.ports.job_progress import SupervisionView
from tests.unit.jobs.helpers import Rig, StopAfter, rig

Answer = Waiting | Ready | Blocked


class Answers:
    """The rule's answers, one a reading (the last one kept)."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.readings = 0

    def readiness(self, spec: JobSpec) -> Answer:
        self.readings += 1
        return self.answers[min(self.readings, len(self.answers)) - 1]


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        self.lines.append(text)


def _supervise(r: Rig, answers: Answers, stop: StopAfter, bound: float | None = None) -> tuple[SupervisionEnd, Lines]:
    job = r.record()
    state = fold(r.store.read(job))
    lines = Lines()
    gate = _Gate(cast(Gates, answers), state, stop, cast(SupervisionView, lines), bound)
    with r.store.lock(job) as lock:
        end = supervise_one(r.supervisor, job, lock, stop, bound=bound, gate=gate)
    return end, lines


WAITING = "waiting for a (nothing is sent until it has its outcome)"


def test_a_waiting_job_is_created_once_its_gate_opens_and_said_so_once() -> None:
    r = rig()
    answers = Answers(Waiting(JobId("a")), Waiting(JobId("a")), Ready())
    end, lines = _supervise(r, answers, StopAfter(r.clock))
    assert end.ending is Ending.OUTCOME
    assert answers.readings == 3  # read every GATE_POLL until it opened, never after
    assert lines.lines == [WAITING, "ready: every job it waits for is as it asks; creating it"]


def test_a_blocked_job_ends_blocked_and_nothing_is_created() -> None:
    r = rig()
    blocked = Blocked(JobId("a"), "failed", JobId("a"))
    end, lines = _supervise(r, Answers(Waiting(JobId("a")), blocked), StopAfter(r.clock))
    assert end.ending is Ending.BLOCKED and end.detail == blocked.line()
    assert end.state is not None and not fold(r.store.read(end.state.name)).attempts
    assert lines.lines == [WAITING, blocked.line()]


def test_reconcile_s_bound_ends_the_wait_with_what_it_waits_for_outstanding() -> None:
    r = rig()
    end, lines = _supervise(r, Answers(Waiting(JobId("a"))), StopAfter(r.clock), bound=3 * GATE_POLL)
    assert end.ending is Ending.OUTSTANDING and end.left == (Outstanding(0, "waiting for a"),)
    assert lines.lines == [WAITING]


def test_a_signal_during_the_wait_drains_it_without_reading_again() -> None:
    r = rig()
    answers = Answers(Waiting(JobId("a")))
    end, lines = _supervise(r, answers, StopAfter(r.clock, waits=2))
    assert lines.lines == [WAITING]
    assert end.ending is Ending.DRAINED and end.detail == "waiting for a"
    assert answers.readings == 2
    assert end.state is not None and not fold(r.store.read(end.state.name)).attempts
