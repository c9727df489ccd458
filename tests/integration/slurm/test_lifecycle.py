"""A job's life on a real Slurm 22.05, through SlurmCliScheduler only."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.domain.model.jobs.objects import ENDED, CreateOutcome, ObjectSpec, ObjectState, ObjectView
from tests.expect import present
from tests.infra.slurm import SlurmTestCluster
from tests.integration.slurm.conftest import created, new_name, seen, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def test_held_then_confirmed_by_nonce_then_released_completes_with_exit_code_0(scheduler: SlurmCliScheduler,
                                                                               workdir: Path) -> None:
    name, nonce = new_name()
    answer = scheduler.create_held(ObjectSpec(name, nonce, command=("sh", "-c", "echo hello from $0", "dsc"),
                                              workdir=str(workdir)))
    assert answer.outcome is CreateOutcome.CREATED, answer.detail
    oid = created(answer)
    held = seen(scheduler, name, oid)
    assert held is not None
    assert (held.state, held.nonce, held.owner, held.started) == (ObjectState.HELD, nonce, "root", False)

    scheduler.release(oid)
    done = wait_for("COMPLETED", lambda: (v := seen(scheduler, name, oid)) and v.state in ENDED and v)
    assert (done.state, done.exit_code, done.nonce, done.started) == (ObjectState.COMPLETED, 0, nonce, True)
    assert (workdir / f"slurm-{oid}.out").read_text() == "hello from dsc\n"
    scheduler.release(oid)  # releasing an ended job changes nothing


def test_a_failing_job_ends_failed_with_its_exit_code(scheduler: SlurmCliScheduler, workdir: Path) -> None:
    name, nonce = new_name()
    oid = created(scheduler.create_held(ObjectSpec(name, nonce, script="#!/bin/sh\necho failing\nexit 3\n",
                                                   workdir=str(workdir))))
    scheduler.release(oid)
    ended = wait_for("FAILED", lambda: (v := seen(scheduler, name, oid)) and v.state in ENDED and v)
    assert (ended.state, ended.exit_code, ended.signal) == (ObjectState.FAILED, 3, None)


def test_a_cancelled_held_job_ends_cancelled_never_started(scheduler: SlurmCliScheduler, workdir: Path) -> None:
    name, nonce = new_name()
    oid = created(scheduler.create_held(ObjectSpec(name, nonce, command=("sleep", "60"), workdir=str(workdir))))
    scheduler.cancel(oid)
    view = wait_for("CANCELLED", lambda: (v := seen(scheduler, name, oid)) and v.state in ENDED and v)
    assert (view.state, view.started) == (ObjectState.CANCELLED, False)
    scheduler.cancel(oid)  # cancelling an ended job changes nothing


def test_a_running_job_is_cancelled(scheduler: SlurmCliScheduler, workdir: Path) -> None:
    name, nonce = new_name()
    oid = created(scheduler.create_held(ObjectSpec(name, nonce, command=("sleep", "60"), workdir=str(workdir))))
    scheduler.release(oid)
    wait_for("RUNNING", lambda: (v := seen(scheduler, name, oid)) and v.state is ObjectState.RUNNING)
    scheduler.cancel(oid)
    view = wait_for("ended", lambda: (v := seen(scheduler, name, oid)) and v.state in ENDED and v)
    assert (view.state, view.started) == (ObjectState.CANCELLED, True)


def test_a_requeued_job_is_pending_again_has_started_and_runs_to_completion(scheduler: SlurmCliScheduler,
                                                                            workdir: Path) -> None:
    name, nonce = new_name()
    oid = created(scheduler.create_held(ObjectSpec(name, nonce, command=("sh", "-c", "echo run; sleep 2"),
                                                   workdir=str(workdir), options=("--open-mode=append",))))
    scheduler.release(oid)
    wait_for("RUNNING", lambda: (v := seen(scheduler, name, oid)) and v.state is ObjectState.RUNNING)
    out = workdir / f"slurm-{oid}.out"
    # RUNNING is the controller's word: the batch script may not have printed yet, and a requeue then
    # would leave one "run" in the file where two runs happened
    wait_for("the first run's output", lambda: out.exists() and "run" in out.read_text())
    scheduler.requeue(oid)
    again = wait_for("requeued", lambda: (v := seen(scheduler, name, oid))
                     and v.state in (ObjectState.PENDING, ObjectState.REQUEUED) and v)
    assert again.started  # a sweep must never stop it: it has run
    assert again.state not in ENDED
    done = wait_for("COMPLETED after the rerun", lambda: (v := seen(scheduler, name, oid))
                    and v.state in ENDED and v, timeout=90)
    assert (done.state, done.exit_code) == (ObjectState.COMPLETED, 0)
    assert out.read_text().count("run") == 2


def test_hold_is_a_user_hold_and_release_undoes_it(scheduler: SlurmCliScheduler, workdir: Path,
                                                   slurm_cluster: SlurmTestCluster) -> None:
    name, nonce = new_name()
    oid = created(scheduler.create_held(ObjectSpec(name, nonce, command=("true",), workdir=str(workdir),
                                                   options=("--begin=now+300",))))
    scheduler.release(oid)
    assert present(seen(scheduler, name, oid)).state is ObjectState.PENDING
    scheduler.hold(oid)
    view = present(seen(scheduler, name, oid))
    assert (view.state, view.reason) == (ObjectState.HELD, "JobHeldUser")  # not JobHeldAdmin, even as root
    scheduler.cancel(oid)


def test_stop_by_name_stops_every_object_of_the_name_running_ones_too(scheduler: SlurmCliScheduler,
                                                                      workdir: Path) -> None:
    name, _ = new_name()
    running = created(scheduler.create_held(ObjectSpec(name, new_name()[1], command=("sleep", "60"),
                                                       workdir=str(workdir))))
    held = created(scheduler.create_held(ObjectSpec(name, new_name()[1], command=("sleep", "60"),
                                                    workdir=str(workdir))))
    scheduler.release(running)
    wait_for("RUNNING", lambda: (v := seen(scheduler, name, running)) and v.state is ObjectState.RUNNING)
    assert sorted(scheduler.stop_by_name(name)) == sorted([running, held])

    def both_ended() -> tuple[ObjectView, ...] | None:
        objects = scheduler.query([name], confirm_absent=True).objects
        return objects if len(objects) == 2 and all(v.state in ENDED for v in objects) else None

    views = wait_for("both ended", both_ended)
    assert {v.state for v in views} == {ObjectState.CANCELLED}


def test_purged_jobs_are_found_in_accounting_even_one_that_never_became_eligible(scheduler: SlurmCliScheduler,
                                                                                 workdir: Path) -> None:
    failed_name, failed_nonce = new_name()
    held_name, held_nonce = new_name()
    failed = created(scheduler.create_held(ObjectSpec(failed_name, failed_nonce, script="#!/bin/sh\nexit 3\n",
                                                      workdir=str(workdir))))
    held = created(scheduler.create_held(ObjectSpec(held_name, held_nonce, command=("true",), workdir=str(workdir))))
    scheduler.release(failed)
    scheduler.cancel(held)  # held, then cancelled: never eligible, missing from plain sacct name queries
    names = [failed_name, held_name]
    wait_for("slurmctld to purge both (MinJobAge)", lambda: scheduler.query(names, confirm_absent=False).objects == (),
             timeout=120, every=2)
    result = scheduler.query(names, confirm_absent=True)
    assert result.complete, result.detail
    views = {v.object_id: v for v in result.objects}
    assert (views[failed].state, views[failed].exit_code, views[failed].nonce) == (ObjectState.FAILED, 3,
                                                                                    failed_nonce)
    assert (views[held].state, views[held].nonce, views[held].started) == (ObjectState.CANCELLED, held_nonce, False)


def test_clusters_option_reaches_every_command(slurm_cluster: SlurmTestCluster, workdir: Path) -> None:
    scheduler = SlurmCliScheduler(SlurmClusterConfig(env=slurm_cluster.env, clusters="dunscaith"))
    name, nonce = new_name()
    answer = scheduler.create_held(ObjectSpec(name, nonce, command=("true",), workdir=str(workdir)))
    assert answer.outcome is CreateOutcome.CREATED, answer.detail
    oid = created(answer)
    assert present(seen(scheduler, name, oid)).nonce == nonce
    scheduler.cancel(oid)
    wait_for("CANCELLED", lambda: (v := seen(scheduler, name, oid))
             and v.state is ObjectState.CANCELLED)
