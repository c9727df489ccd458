"""A sweep as one job array on a real Slurm 22.05, through SlurmCliScheduler only.

Each element is looked up by its own name (``S-i``), as a supervisor looks up a job: the task of the array
that answers to it, with the array's nonce, its own state, exit code and output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, CreateOutcome, ObjectSpec, ObjectState, ObjectView
from dunscaith.ports.scheduler import SchedulerError
from tests.infra.slurm import SlurmTestCluster
from tests.infra.slurm_bin import lose_reply_after_real_sbatch, make_bin_dir
from tests.integration.slurm.conftest import created, new_name, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def elements(sweep: JobId, nonce: Nonce, commands: Sequence[tuple[str, ...]], workdir: Path,
             first: int = 1) -> list[tuple[int, ObjectSpec]]:
    return [(i, ObjectSpec(JobId(f"{sweep}-{i}"), nonce, command=command, workdir=str(workdir)))
            for i, command in enumerate(commands, start=first)]


def by_name(scheduler: SlurmCliScheduler, names: Sequence[str]) -> dict[str, list[ObjectView]]:
    result = scheduler.query([JobId(n) for n in names], confirm_absent=True)
    assert result.complete, result.detail
    found: dict[str, list[ObjectView]] = {n: [] for n in names}
    for view in result.objects:
        found[view.name].append(view)
    return found


def one_each(scheduler: SlurmCliScheduler, names: Sequence[str]) -> dict[str, ObjectView] | None:
    """Each name's one object, or None while a name has none (or more than one)."""
    found = by_name(scheduler, names)
    return {n: views[0] for n, views in found.items()} if all(len(v) == 1 for v in found.values()) else None


def all_ended(scheduler: SlurmCliScheduler, names: Sequence[str]) -> dict[str, ObjectView] | None:
    views = one_each(scheduler, names)
    return views if views and all(v.state in ENDED for v in views.values()) else None


def test_five_elements_each_run_their_own_command_and_end_with_their_own_exit_code(
        scheduler: SlurmCliScheduler, workdir: Path) -> None:
    sweep, nonce = new_name()
    commands = [("echo", "element one"), ("sh", "-c", "echo element two; exit 3"), ("echo", "element 3 of $HOME"),
                ("printf", "%s\n", "four"), ("sh", "-c", "echo five >&2")]
    answer = scheduler.create_array_held(sweep, elements(sweep, nonce, commands, workdir), None)
    assert answer.outcome is CreateOutcome.CREATED, answer.detail
    array = created(answer)
    names = [f"{sweep}-{i}" for i in range(1, 6)]

    held = one_each(scheduler, names)
    assert held is not None
    assert {n: (v.object_id, v.state, v.nonce, v.started) for n, v in held.items()} == {
        n: (scheduler.task_object(array, i), ObjectState.HELD, nonce, False) for i, n in enumerate(names, start=1)}

    scheduler.release(array)  # one call releases every task
    ended = wait_for("every task ended", lambda: all_ended(scheduler, names))
    assert {n: (v.object_id, v.state, v.exit_code, v.nonce, v.started) for n, v in ended.items()} == {
        f"{sweep}-1": (f"{array}_1", ObjectState.COMPLETED, 0, nonce, True),
        f"{sweep}-2": (f"{array}_2", ObjectState.FAILED, 3, nonce, True),
        f"{sweep}-3": (f"{array}_3", ObjectState.COMPLETED, 0, nonce, True),
        f"{sweep}-4": (f"{array}_4", ObjectState.COMPLETED, 0, nonce, True),
        f"{sweep}-5": (f"{array}_5", ObjectState.COMPLETED, 0, nonce, True),
    }
    outputs = {i: (workdir / f"slurm-{array}_{i}.out").read_text() for i in range(1, 6)}
    assert outputs == {1: "element one\n", 2: "element two\n", 3: "element 3 of $HOME\n", 4: "four\n", 5: "five\n"}
    paths = scheduler.output_paths(ObjectId(f"{array}_2"))
    assert paths is not None and paths.stdout == str(workdir / f"slurm-{array}_2.out")
    times = scheduler.times([ObjectId(f"{array}_1"), ObjectId(f"{array}_4")])
    assert sorted(times) == [f"{array}_1", f"{array}_4"]
    assert all(t.started is not None and t.ended is not None for t in times.values())
    scheduler.release(array)  # releasing an array whose tasks all ended changes nothing


def test_an_element_script_runs_by_its_interpreter_with_the_arrays_sbatch_lines(scheduler: SlurmCliScheduler,
                                                                                 workdir: Path) -> None:
    sweep, nonce = new_name()
    script = "#!/bin/sh\n#SBATCH --job-name=ignored\necho script of task $SLURM_ARRAY_TASK_ID\n"
    specs = [(i, ObjectSpec(JobId(f"{sweep}-{i}"), nonce, script=script, workdir=str(workdir))) for i in (0, 7)]
    array = created(scheduler.create_array_held(sweep, specs, None))
    scheduler.release(array)
    wait_for("both ended", lambda: all_ended(scheduler, [f"{sweep}-0", f"{sweep}-7"]))
    assert (workdir / f"slurm-{array}_7.out").read_text() == "script of task 7\n"


def test_max_running_holds_the_other_tasks_back_and_stopping_the_sweep_stops_every_task(
        scheduler: SlurmCliScheduler, workdir: Path) -> None:
    sweep, nonce = new_name()
    array = created(scheduler.create_array_held(sweep, elements(sweep, nonce, [("sleep", "60")] * 3, workdir), 1))
    names = [f"{sweep}-{i}" for i in (1, 2, 3)]
    scheduler.release(array)

    def one_running() -> dict[str, ObjectView] | None:
        views = one_each(scheduler, names)
        states = sorted(v.state for v in (views or {}).values())
        return views if states == [ObjectState.PENDING, ObjectState.PENDING, ObjectState.RUNNING] else None

    views = wait_for("one task running, two pending", one_running)
    assert sorted(v.reason for v in views.values() if v.state is ObjectState.PENDING) == ["JobArrayTaskLimit"] * 2

    stopped = scheduler.stop_by_name(sweep)
    assert sorted(stopped) == sorted(v.object_id for v in views.values())
    ended = wait_for("every task cancelled", lambda: all_ended(scheduler, names))
    assert {v.state for v in ended.values()} == {ObjectState.CANCELLED}
    assert sorted(v.started for v in ended.values()) == [False, False, True]


def test_stopping_one_element_stops_its_task_only(scheduler: SlurmCliScheduler, workdir: Path) -> None:
    sweep, nonce = new_name()
    array = created(scheduler.create_array_held(sweep, elements(sweep, nonce, [("true",)] * 3, workdir), None))
    names = [f"{sweep}-{i}" for i in (1, 2, 3)]

    assert scheduler.stop_by_name(JobId(f"{sweep}-2")) == [f"{array}_2"]
    views = wait_for("task 2 cancelled", lambda: (v := one_each(scheduler, names))
                     and v[f"{sweep}-2"].state is ObjectState.CANCELLED and v)
    assert (views[f"{sweep}-1"].state, views[f"{sweep}-3"].state) == (ObjectState.HELD, ObjectState.HELD)
    assert views[f"{sweep}-2"].object_id == f"{array}_2" and not views[f"{sweep}-2"].started

    # the two tasks left are all the array's own record holds: each still ends with a record naming it
    assert sorted(scheduler.stop_by_name(sweep)) == [f"{array}_1", f"{array}_3"]
    ended = wait_for("every task cancelled", lambda: all_ended(scheduler, names))
    assert {n: (v.object_id, v.state) for n, v in ended.items()} == {
        n: (f"{array}_{i}", ObjectState.CANCELLED) for i, n in enumerate(names, start=1)}


def test_one_task_is_released_held_cancelled_and_stopped_if_not_started_on_its_own(
        scheduler: SlurmCliScheduler, workdir: Path) -> None:
    sweep, nonce = new_name()
    # %1: task 2, released after task 1, waits for it (JobArrayTaskLimit) and so is still pending when it is
    # held again; without it the scheduler may start task 2 between the release and the hold.
    array = created(scheduler.create_array_held(sweep, elements(sweep, nonce, [("sleep", "60")] * 4, workdir), 1))
    names = [f"{sweep}-{i}" for i in (1, 2, 3, 4)]
    task = {i: ObjectId(f"{array}_{i}") for i in (1, 2, 3, 4)}

    scheduler.release(task[1])
    scheduler.release(task[2])
    scheduler.hold(task[2])  # pending again: a user hold
    scheduler.cancel(task[3])  # held: cancelled, with a record of its own
    assert scheduler.cancel_if_not_started([task[4]]) == [task[4]]
    views = wait_for("task 1 running, 3 and 4 cancelled", lambda: (v := one_each(scheduler, names))
                     and v[names[0]].state is ObjectState.RUNNING and v[names[2]].state in ENDED
                     and v[names[3]].state in ENDED and v)
    assert views[names[1]].state is ObjectState.HELD
    assert [(views[n].state, views[n].started) for n in names[2:]] == [(ObjectState.CANCELLED, False)] * 2
    assert scheduler.cancel_if_not_started([task[1]]) == []  # running: never stopped by this
    scheduler.cancel(task[1])
    wait_for("task 1 cancelled", lambda: (v := one_each(scheduler, names)) and v[names[0]].state in ENDED)
    scheduler.cancel(task[2])
    assert all_ended(scheduler, names) is not None or wait_for("all ended", lambda: all_ended(scheduler, names))


def test_the_array_is_released_whole_though_one_of_its_tasks_was_cancelled_while_held(
        scheduler: SlurmCliScheduler, workdir: Path) -> None:
    """scontrol exits 1 then ("A_2: Job has already finished") though it released the other tasks."""
    sweep, nonce = new_name()
    array = created(scheduler.create_array_held(sweep, elements(sweep, nonce, [("true",)] * 3, workdir), None))
    names = [f"{sweep}-{i}" for i in (1, 2, 3)]
    scheduler.cancel(ObjectId(f"{array}_2"))
    scheduler.release(array)
    ended = wait_for("every task ended", lambda: all_ended(scheduler, names))
    assert [ended[n].state for n in names] == [ObjectState.COMPLETED, ObjectState.CANCELLED, ObjectState.COMPLETED]
    with pytest.raises(SchedulerError, match="ended before it was ever released"):
        scheduler.release(ObjectId(f"{array}_2"))  # the task itself: as a job cancelled while held


def test_a_lost_array_reply_is_unknown_then_every_task_is_found_by_its_element_name_and_nonce(
        config: SlurmClusterConfig, scheduler: SlurmCliScheduler, workdir: Path, tmp_path: Path) -> None:
    lossy = SlurmCliScheduler(dataclasses.replace(
        config, bin_dir=make_bin_dir(tmp_path / "bin", {"sbatch": lose_reply_after_real_sbatch()})))
    sweep, nonce = new_name()
    answer = lossy.create_array_held(sweep, elements(sweep, nonce, [("true",)] * 3, workdir), 2)
    assert answer.outcome is CreateOutcome.UNKNOWN and answer.object_id is None

    found = one_each(scheduler, [f"{sweep}-{i}" for i in (1, 2, 3)])
    assert found is not None
    assert {(v.state, v.nonce, v.started) for v in found.values()} == {(ObjectState.HELD, nonce, False)}
    [array] = {v.object_id.split("_")[0] for v in found.values()}
    assert sorted(v.object_id for v in found.values()) == [f"{array}_{i}" for i in (1, 2, 3)]
    scheduler.stop_by_name(sweep)


def test_an_array_above_max_array_size_is_refused(scheduler: SlurmCliScheduler) -> None:
    assert scheduler.array_refusal(1001, 1000) is None  # the default MaxArraySize of the test cluster: 1001
    said = scheduler.array_refusal(2, 1001)
    assert said == "index 1001 is above this cluster's MaxArraySize (1001: array task indices 0–1000)"


def test_purged_tasks_are_found_in_accounting_even_ones_cancelled_while_held(
        scheduler: SlurmCliScheduler, workdir: Path, slurm_cluster: SlurmTestCluster) -> None:
    """Ended tasks come back from sacct as ``A_i``; tasks cancelled together while still in the array's record
    (a user's own ``scancel A``) leave one record, ``A_[1-3]`` in sacct, which answers for each of them."""
    ran, ran_nonce = new_name()
    kept, kept_nonce = new_name()
    ran_array = created(scheduler.create_array_held(
        ran, elements(ran, ran_nonce, [("true",), ("sh", "-c", "exit 3")], workdir), None))
    kept_array = created(scheduler.create_array_held(kept, elements(kept, kept_nonce, [("true",)] * 3, workdir),
                                                     None))
    scheduler.release(ran_array)
    slurm_cluster.run("scancel", kept_array)  # by hand, the whole held array
    names = [f"{ran}-1", f"{ran}-2", *(f"{kept}-{i}" for i in (1, 2, 3))]
    wait_for("slurmctld to purge them (MinJobAge)",
             lambda: scheduler.query([JobId(n) for n in names], confirm_absent=False).objects == (),
             timeout=150, every=2)
    views = wait_for("every task in accounting", lambda: one_each(scheduler, names))
    assert {n: (v.object_id, v.state, v.exit_code, v.nonce, v.started) for n, v in views.items()} == {
        f"{ran}-1": (f"{ran_array}_1", ObjectState.COMPLETED, 0, ran_nonce, True),
        f"{ran}-2": (f"{ran_array}_2", ObjectState.FAILED, 3, ran_nonce, True),
        **{f"{kept}-{i}": (f"{kept_array}_{i}", ObjectState.CANCELLED, None, kept_nonce, False) for i in (1, 2, 3)},
    }


def test_a_plain_job_named_like_an_element_is_still_its_own(scheduler: SlurmCliScheduler, workdir: Path) -> None:
    sweep, nonce = new_name()
    array = created(scheduler.create_array_held(sweep, elements(sweep, nonce, [("true",)] * 2, workdir), None))
    plain_nonce = Nonce(f"{nonce}-plain")
    plain = created(scheduler.create_held(ObjectSpec(JobId(f"{sweep}-2"), plain_nonce, command=("true",),
                                                     workdir=str(workdir))))
    found = by_name(scheduler, [f"{sweep}-2", sweep])
    assert sorted((v.object_id, v.nonce) for v in found[f"{sweep}-2"]) == sorted(
        [(f"{array}_2", nonce), (plain, plain_nonce)])
    assert found[sweep] == []  # the array's tasks answer to their elements' names, never to the sweep's
    scheduler.stop_by_name(sweep)
    scheduler.stop_by_name(JobId(f"{sweep}-2"))


def test_requeue_of_one_task_runs_it_again_and_leaves_the_others(scheduler: SlurmCliScheduler, workdir: Path) -> None:
    sweep, nonce = new_name()
    commands = [("sh", "-c", "echo run; sleep 5"), ("sleep", "5")]
    array = created(scheduler.create_array_held(sweep, elements(sweep, nonce, commands, workdir), None))
    names = [f"{sweep}-1", f"{sweep}-2"]
    scheduler.release(array)
    wait_for("both running", lambda: (v := one_each(scheduler, names))
             and all(x.state is ObjectState.RUNNING for x in v.values()))
    scheduler.requeue(ObjectId(f"{array}_1"))
    views = wait_for("task 1 back in the queue", lambda: (v := one_each(scheduler, names))
                     and v[names[0]].state in (ObjectState.PENDING, ObjectState.REQUEUED) and v)
    assert views[names[0]].started and views[names[0]].object_id == f"{array}_1"  # it ran once: never swept
    ended = wait_for("both ended", lambda: all_ended(scheduler, names), timeout=90)
    assert [(ended[n].state, ended[n].exit_code) for n in names] == [(ObjectState.COMPLETED, 0)] * 2
    assert (workdir / f"slurm-{array}_1.out").read_text() == "run\n"  # the rerun's output (Slurm truncates)
