"""The residual sweep (``domain.services.jobs.sweep.Sweep``) over every scheduler of the contract suite.

The rule is the domain's (``sweepable``), stated once; what each scheduler must give it is one query
for every name and a cancel that it decides itself, so that an object that started meanwhile is
left alone. These cases run it over the fake, the local scheduler, the real Slurm, and each of them
behind a ``SharedQueryScheduler`` (``scheduler_params.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from dunscaith.domain.model.jobs.ids import Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState, QueryResult
from tests.contract.scheduler_params import SchedulerHarness
from tests.contract.sweeping import Counting, stopped_ids, sweep_once


def _ended(*object_ids: ObjectId) -> Callable[[QueryResult], bool]:
    def all_ended(result: QueryResult) -> bool:
        states = {v.object_id: v.state for v in result.objects}
        return all(states.get(o) in ENDED for o in object_ids)

    return all_ended


def test_a_sweep_stops_held_listed_objects_in_one_call_never_a_running_or_foreign_one(
        harness: SchedulerHarness) -> None:
    attempts, pruned, bystander = harness.name(), harness.name(), harness.name()
    listed = harness.created(harness.spec(attempts, harness.command_running, nonce="listed-1"))
    foreign = harness.created(harness.spec(attempts, harness.command_running, nonce="another-nonce"))
    running = harness.created(harness.spec(attempts, harness.command_running, nonce="listed-2"))
    any_held = harness.created(harness.spec(pruned, harness.command_running))
    spared = harness.created(harness.spec(bystander, harness.command_running, nonce="listed-1"))
    harness.scheduler.release(running)
    harness.settle([attempts], lambda r: any(v.object_id == running and v.state is ObjectState.RUNNING
                                             for v in r.objects))
    counted = Counting(harness.scheduler)

    report = sweep_once(counted, {attempts: frozenset({Nonce("listed-1"), Nonce("listed-2")}), pruned: None})

    assert stopped_ids(report) == sorted([listed, any_held])
    assert report.problems == [] and report.swept == {"here": sorted([attempts, pruned])}
    assert counted.calls == {"query": 1, "cancel_if_not_started": 1}  # one request for every name
    assert counted.confirmed == [False]  # a sweep acts on live objects only
    result = harness.settle([attempts, pruned], _ended(listed, any_held))
    states = {v.object_id: v.state for v in result.objects}
    assert states == {listed: ObjectState.CANCELLED, foreign: ObjectState.HELD, running: ObjectState.RUNNING,
                      any_held: ObjectState.CANCELLED}
    assert not next(v for v in result.objects if v.object_id == listed).started
    bystanders = harness.scheduler.query([bystander], confirm_absent=True)
    assert [(v.object_id, v.state) for v in bystanders.objects] == [(spared, ObjectState.HELD)]
    again = sweep_once(harness.scheduler, {attempts: frozenset({Nonce("listed-1")})})
    assert again.stopped == [] and again.problems == []  # nothing left to stop


def test_a_sweep_with_nothing_to_stop_asks_once_and_cancels_nothing(harness: SchedulerHarness) -> None:
    name, empty = harness.name(), harness.name()
    other_attempt = harness.created(harness.spec(name, harness.command_running, nonce="not-listed"))
    counted = Counting(harness.scheduler)

    report = sweep_once(counted, {name: frozenset({Nonce("listed")}), empty: None})

    assert (report.stopped, report.problems) == ([], [])
    assert counted.calls == {"query": 1}
    (view,) = harness.scheduler.query([name], confirm_absent=True).objects
    assert (view.object_id, view.state) == (other_attempt, ObjectState.HELD)
