"""``HeldBack``: while nothing of its supervision moves, what held jobs wait for is read again at a poll that
backs off (1 s, 2 s, 4 s ... at most ``GATE_POLL_MAX``), not every second for ever: a 500-element sweep ->
reduce read the sweep's 500 summaries each second (47 s of the supervisor's CPU per hour on the test
Slurm, benchmarks/pipeline.py (b)). An outcome or an end in this loop asks the rule at once, and the poll
starts again from 1 s."""

from __future__ import annotations

from collections.abc import Sequence

from dunscaith.domain.model.jobs.dependencies import Readiness
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.services.jobs.gates import Gates
from dunscaith.domain.services.jobs.sweep_gate import GATE_POLL, GATE_POLL_MAX, HeldBack
from tests.unit.jobs.test_supervise_pipeline import _pipeline


class CountingGates(Gates):
    asked = 0

    def answers(self, members: Sequence[JobSummary]) -> dict[JobId, Readiness]:
        self.asked += 1
        return super().answers(members)


def _held() -> tuple[HeldBack, CountingGates]:
    rig = _pipeline()
    gates = CountingGates(rig.store)
    gate = HeldBack(gates)
    assert gate.hold(rig.store.summary(JobId(j)) for j in ("study.reduce", "study.plot")) == {
        JobId("study.reduce"),
        JobId("study.plot"),
    }
    gates.asked = 0
    return gate, gates


def test_with_nothing_moving_the_rule_is_asked_at_a_poll_that_backs_off() -> None:
    gate, gates = _held()
    now = 0.0
    while now < 3600.0:  # an hour of passes, each at the time the gate asks to be woken
        gate.release(now, moved=0, stopping=False)
        now = max(now + 0.001, gate.next_at())
    assert gates.asked <= 80, gates.asked  # about one a minute (60 s at most between two), not 3,600
    assert gate.next_at() - now <= GATE_POLL_MAX


def test_something_moving_asks_at_once_and_the_poll_starts_again() -> None:
    gate, gates = _held()
    for now in (0.0, 1.0, 3.0, 7.0, 15.0):
        gate.release(now, moved=0, stopping=False)
    asked = gates.asked
    gate.release(15.5, moved=1, stopping=False)  # an outcome in this loop: asked at once
    assert gates.asked == asked + 1
    assert gate.next_at() == 15.5 + GATE_POLL
