"""The array contract (``ports.scheduler.CreatesArrays``), for every scheduler of ``scheduler_params.py`` that
makes a sweep's objects in one request (the real Slurm, and behind a ``SharedQueryScheduler``); a scheduler
that does not is skipped here and runs a sweep as one object per element.

What a sweep's engine relies on: each element's object is one task, found by the element's own name with
the array's nonce exactly as a job's object is; the array's id releases every task; a stop by an element's
name stops that task alone. (That Slurm's stop by the sweep's name stops every task, the array's job name, is
Slurm's own: tests/integration/slurm/test_slurm_arrays.py.)
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, CreateOutcome, ObjectSpec, ObjectState, QueryResult
from dunscaith.ports.scheduler import CreatesArrays
from tests.contract.scheduler_params import SchedulerHarness


def arrays_of(harness: SchedulerHarness) -> CreatesArrays:
    scheduler = harness.scheduler
    if not isinstance(scheduler, CreatesArrays):
        pytest.skip(f"{type(scheduler).__name__} makes no arrays")
    return scheduler


def make_array(harness: SchedulerHarness, commands: Sequence[tuple[str, ...]],
               max_running: int | None = None) -> tuple[JobId, Nonce, ObjectId, list[JobId]]:
    arrays = arrays_of(harness)
    sweep = harness.name()
    nonce = Nonce(f"n-{sweep}")
    elements = [(i, ObjectSpec(JobId(f"{sweep}-{i}"), nonce, command=c)) for i, c in enumerate(commands, start=1)]
    assert arrays.array_refusal(len(elements), len(elements)) is None
    answer = arrays.create_array_held(sweep, elements, max_running)
    assert answer.outcome is CreateOutcome.CREATED and answer.object_id is not None, answer
    return sweep, nonce, answer.object_id, [spec.name for _, spec in elements]


def one_each(result: QueryResult, names: Sequence[JobId]) -> bool:
    return sorted(v.name for v in result.objects) == sorted(names)


def test_each_element_is_one_held_task_found_by_its_own_name_and_the_arrays_nonce(harness: SchedulerHarness) -> None:
    sweep, nonce, array, names = make_array(harness, [harness.command_exiting(0)] * 3)
    arrays = arrays_of(harness)
    result = harness.settle(names, lambda r: one_each(r, names))
    assert sorted((v.name, v.object_id, v.state, v.nonce, v.started) for v in result.objects) == sorted(
        (n, arrays.task_object(array, i), ObjectState.HELD, nonce, False) for i, n in enumerate(names, start=1))
    assert harness.scheduler.query([sweep], confirm_absent=False).objects == ()  # tasks answer to their elements


def test_the_arrays_id_releases_every_task_and_each_ends_with_its_own_exit_code(harness: SchedulerHarness) -> None:
    _, _, array, names = make_array(harness, [harness.command_exiting(c) for c in (0, 3, 0)], max_running=2)
    harness.scheduler.release(array)
    result = harness.settle(names, lambda r: one_each(r, names) and all(v.state in ENDED for v in r.objects))
    assert sorted((v.name, v.state, v.exit_code) for v in result.objects) == [
        (names[0], ObjectState.COMPLETED, 0), (names[1], ObjectState.FAILED, 3), (names[2], ObjectState.COMPLETED, 0)]


def test_a_stop_by_an_elements_name_stops_its_task_alone(harness: SchedulerHarness) -> None:
    _, _, array, names = make_array(harness, [harness.command_running] * 3)
    arrays = arrays_of(harness)
    assert harness.scheduler.stop_by_name(names[1]) == [arrays.task_object(array, 2)]
    result = harness.settle(names, lambda r: any(v.name == names[1] and v.state in ENDED for v in r.objects))
    assert sorted((v.name, v.state) for v in result.objects) == [
        (names[0], ObjectState.HELD), (names[1], ObjectState.CANCELLED), (names[2], ObjectState.HELD)]
    for i in (0, 2):  # the tasks left are all the array's record held: each still ends with its own
        assert harness.scheduler.stop_by_name(names[i]) == [arrays.task_object(array, i + 1)]
    result = harness.settle(names, lambda r: one_each(r, names) and all(v.state in ENDED for v in r.objects))
    assert {v.state for v in result.objects} == {ObjectState.CANCELLED}
