"""``HeldBack``: while nothing of its supervision moves, what held jobs wait for is read again at a poll that
backs off (1 s, 2 s, 4 s ... at most ``GATE_POLL_MAX``), not every second for ever: a 500-element sweep ->
reduce read the sweep's 500 summaries each second (47 s of the supervisor's CPU per hour on the test
Slurm, benchmarks/pipeline.py (b)). An outcome or an end in this loop asks the rule at once, and the poll
starts again from 1 s. While every job they wait for that has no outcome yet is one this loop supervises, and
none is blocked, only this loop's own moves can open a gate: the poll backs off to ``GATE_POLL_OURS``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.services.jobs.gates import GateReading, Gates
from dunscaith.domain.services.jobs.sweep_gate import GATE_POLL, GATE_POLL_MAX, GATE_POLL_OURS, HeldBack
from dunscaith.ports.job_store import JobStore, StoreError
from tests.unit.jobs.test_supervise_pipeline import _pipeline

NONE: frozenset[JobId] = frozenset()  # no job of the loop has moved


class CountingGates(Gates):
    asked = 0
    seqs_fail = False

    def __init__(self, store: JobStore) -> None:
        super().__init__(store)
        self.store = store

    def read(self, members: Sequence[JobSummary]) -> GateReading:
        self.asked += 1
        return super().read(members)

    def last_seqs(self, jobs: Sequence[JobId]) -> dict[JobId, int]:
        if self.seqs_fail:
            raise StoreError("the store is gone")
        return super().last_seqs(jobs)


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
        gate.release(now, moved=NONE, stopping=False)
        now = max(now + 0.001, gate.next_at())
    assert gates.asked <= 80, gates.asked  # about one a minute (60 s at most between two), not 3,600
    assert gate.next_at() - now <= GATE_POLL_MAX


def test_something_moving_asks_at_once_and_the_poll_starts_again() -> None:
    gate, gates = _held()
    for now in (0.0, 1.0, 3.0, 7.0, 15.0):
        gate.release(now, moved=NONE, stopping=False)
    asked = gates.asked
    gate.release(15.5, moved=frozenset({JobId("study.train-0")}), stopping=False)  # an outcome here: asked at once
    assert gates.asked == asked + 1
    assert gate.next_at() == 15.5 + GATE_POLL


TRAIN = {JobId(f"study.train-{i}") for i in range(3)}  # what study.reduce waits for (plot waits for reduce)


def _hour(gate: HeldBack, ours: set[JobId]) -> float:
    """An hour of passes with nothing moving, each at the time the gate asks: the longest wait it asked for."""
    now, longest = 0.0, 0.0
    while now < 3600.0:
        gate.release(now, moved=NONE, stopping=False, ours=lambda: ours)
        longest = max(longest, gate.next_at() - now)
        now = max(now + 0.001, gate.next_at())
    return longest


def test_while_this_loop_supervises_everything_they_wait_for_the_poll_is_rare() -> None:
    gate, gates = _held()
    assert _hour(gate, TRAIN | {JobId("study.reduce"), JobId("study.plot")}) == GATE_POLL_OURS
    # 1, 2, 4 ... 512 s, then every 10 minutes: each poll asks only whether the held jobs' records grew
    assert gates.asked == 1, gates.asked


def test_a_held_jobs_record_that_grew_while_only_this_loop_could_open_its_gate_is_read_in_full() -> None:
    # A cancel of study.reduce from another terminal is in its record: the next poll reads what it waits for
    gate, gates = _held()
    ours = TRAIN | {JobId("study.reduce"), JobId("study.plot")}
    gate.release(0.0, moved=NONE, stopping=False, ours=lambda: ours)
    gate.release(gate.next_at(), moved=NONE, stopping=False, ours=lambda: ours)
    assert gates.asked == 1
    kind, data = ev.encode(ev.Requested("r-1", "cancel"))
    gates.store.append(JobId("study.reduce"), datetime(2026, 1, 1, tzinfo=UTC), kind, data)
    gate.release(gate.next_at(), moved=NONE, stopping=False, ours=lambda: ours)
    assert gates.asked == 2
    gate.release(gate.next_at(), moved=NONE, stopping=False, ours=lambda: ours)
    assert gates.asked == 2  # and not again while it does not grow


def test_a_store_that_cannot_say_how_far_the_held_records_go_makes_each_poll_read_in_full() -> None:
    gate, gates = _held()
    ours = TRAIN | {JobId("study.reduce"), JobId("study.plot")}
    gates.seqs_fail = True
    for _ in range(4):
        gate.release(gate.next_at(), moved=NONE, stopping=False, ours=lambda: ours)
    assert gates.asked == 4


def test_a_job_they_wait_for_that_another_process_supervises_keeps_the_minute_poll() -> None:
    gate, gates = _held()
    assert _hour(gate, TRAIN - {JobId("study.train-1")}) == GATE_POLL_MAX
    assert gates.asked > 60, gates.asked


def _succeed(gates: CountingGates, job: str) -> None:
    kind, data = ev.encode(ev.OutcomeReached("succeeded", ""))
    gates.store.append(JobId(job), datetime(2026, 1, 1, tzinfo=UTC), kind, data)


def test_a_move_that_cannot_open_a_gate_reads_only_the_summary_of_the_job_that_moved() -> None:
    # While only this loop can change what study.reduce waits for, each element's success is worked out from its
    # own summary: reduce still waits for the others, nothing is read in full. The last success opens the gate,
    # which a full reading then says.
    gate, gates = _held()
    ours = TRAIN | {JobId("study.reduce"), JobId("study.plot")}
    gate.release(0.0, moved=NONE, stopping=False, ours=lambda: ours)
    assert gates.asked == 1
    moved: set[JobId] = set()
    for i in (0, 1):
        _succeed(gates, f"study.train-{i}")
        moved.add(JobId(f"study.train-{i}"))
        assert gate.release(1.0 + i, moved=frozenset(moved), stopping=False, ours=lambda: ours) == []
        assert gates.asked == 1
    _succeed(gates, "study.train-2")
    moved.add(JobId("study.train-2"))
    opened = gate.release(3.0, moved=frozenset(moved), stopping=False, ours=lambda: ours)
    assert [m.job for m in opened] == ["study.reduce"]
    assert gates.asked == 2


def test_a_move_that_blocks_a_gate_is_read_in_full_and_said() -> None:
    gate, gates = _held()
    ours = TRAIN | {JobId("study.reduce"), JobId("study.plot")}
    gate.release(0.0, moved=NONE, stopping=False, ours=lambda: ours)
    kind, data = ev.encode(ev.OutcomeReached("failed", "exit code 1"))
    gates.store.append(JobId("study.train-1"), datetime(2026, 1, 1, tzinfo=UTC), kind, data)
    assert gate.release(1.0, moved=frozenset({JobId("study.train-1")}), stopping=False, ours=lambda: ours) == []
    assert gates.asked == 2
    assert set(gate.blocked) == {JobId("study.reduce"), JobId("study.plot")}
