"""What goes wrong on a real Slurm: lost replies, refusals, a lying or failing squeue, a node failure."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.domain.model.jobs.objects import ENDED, CreateOutcome, ObjectSpec, ObjectState
from tests.contract.sweeping import stopped_ids, sweep_once
from tests.expect import present
from tests.infra.slurm import SlurmTestCluster
from tests.infra.slurm_bin import calls, lose_reply_after_real_sbatch, make_bin_dir
from tests.integration.slurm.conftest import created, new_name, seen, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def test_a_lost_reply_is_unknown_then_found_by_its_nonce_then_swept_by_name(
        config: SlurmClusterConfig, scheduler: SlurmCliScheduler, workdir: Path, tmp_path: Path) -> None:
    lossy = SlurmCliScheduler(dataclasses.replace(
        config, bin_dir=make_bin_dir(tmp_path / "bin", {"sbatch": lose_reply_after_real_sbatch()})))
    name, nonce = new_name()
    answer = lossy.create_held(ObjectSpec(name, nonce, command=("sleep", "60"), workdir=str(workdir)))
    assert answer.outcome is CreateOutcome.UNKNOWN and answer.object_id is None

    # The next query finds the object the lost reply made, by its nonce: held, never started.
    [found] = [v for v in scheduler.query([name], confirm_absent=True).objects if v.nonce == nonce]
    assert (found.state, found.started, found.owner) == (ObjectState.HELD, False, "root")

    # Another attempt's nonce does not match it: a sweep for that one leaves it alone.
    assert sweep_once(scheduler, {name: frozenset({new_name()[1]})}).stopped == []
    assert stopped_ids(sweep_once(scheduler, {name: frozenset({nonce})})) == [found.object_id]
    view = wait_for("CANCELLED", lambda: (v := seen(scheduler, name, found.object_id))
                    and v.state in ENDED and v)
    assert (view.state, view.started) == (ObjectState.CANCELLED, False)


def test_a_sweep_never_stops_a_running_object(scheduler: SlurmCliScheduler, workdir: Path) -> None:
    name, nonce = new_name()
    oid = created(scheduler.create_held(ObjectSpec(name, nonce, command=("sleep", "60"), workdir=str(workdir))))
    scheduler.release(oid)
    wait_for("RUNNING", lambda: (v := seen(scheduler, name, oid)) and v.state is ObjectState.RUNNING)
    assert sweep_once(scheduler, {name: None}).stopped == []
    assert scheduler.cancel_if_not_started([oid]) == []  # slurmctld itself skips a running job
    assert present(seen(scheduler, name, oid)).state is ObjectState.RUNNING
    scheduler.cancel(oid)


def test_a_refused_submission_makes_nothing(scheduler: SlurmCliScheduler, workdir: Path) -> None:
    name, nonce = new_name()
    answer = scheduler.create_held(ObjectSpec(name, nonce, command=("true",), workdir=str(workdir),
                                              options=("--partition=no-such-partition",)))
    assert answer.outcome is CreateOutcome.REFUSED
    assert "partition" in answer.detail
    assert scheduler.query([name], confirm_absent=False).objects == ()


def test_more_cpus_than_the_node_has_is_refused(scheduler: SlurmCliScheduler, workdir: Path,
                                                slurm_cluster: SlurmTestCluster) -> None:
    name, nonce = new_name()
    answer = scheduler.create_held(ObjectSpec(name, nonce, command=("true",), workdir=str(workdir),
                                              options=(f"--cpus-per-task={slurm_cluster.cpus + 1}",)))
    assert answer.outcome is CreateOutcome.REFUSED, answer.detail


@pytest.mark.parametrize(("body", "complete"), [
    ("exit 0", True),  # answers, with nothing: absence, which proves nothing
    ('echo "slurm_load_jobs error: Socket timed out on send/recv operation" >&2; exit 1', False),
    ("kill -9 $$", False),
])
def test_squeue_answering_empty_or_failing_never_says_done(
        config: SlurmClusterConfig, scheduler: SlurmCliScheduler, workdir: Path, tmp_path: Path, body: str,
        complete: bool) -> None:
    name, nonce = new_name()
    oid = created(scheduler.create_held(ObjectSpec(name, nonce, command=("sleep", "60"), workdir=str(workdir))))
    count = tmp_path / "calls"
    broken = SlurmCliScheduler(dataclasses.replace(
        config, bin_dir=make_bin_dir(tmp_path / "bin", {"squeue": body}, count_to=count)))
    result = broken.query([name], confirm_absent=True)
    assert result.complete is complete
    assert all(v.state not in ENDED for v in result.objects)  # the held job is never reported done
    if complete:  # an empty answer is checked in accounting, which knows of no end either
        assert [c.split()[0] for c in calls(count) if not c.startswith("scontrol")] == ["squeue", "sacct"]
    assert present(seen(scheduler, name, oid)).state is ObjectState.HELD
    scheduler.cancel(oid)


def test_a_node_failure_ends_the_job_node_fail(scheduler: SlurmCliScheduler, workdir: Path,
                                               slurm_cluster: SlurmTestCluster) -> None:
    name, nonce = new_name()
    oid = created(scheduler.create_held(ObjectSpec(name, nonce, command=("sleep", "120"), workdir=str(workdir),
                                                   options=("--no-requeue",))))
    scheduler.release(oid)
    wait_for("RUNNING", lambda: (v := seen(scheduler, name, oid)) and v.state is ObjectState.RUNNING)
    slurm_cluster.kill_slurmd()
    try:
        view = wait_for("NODE_FAIL", lambda: (v := seen(scheduler, name, oid)) and v.state in ENDED
                        and v, timeout=90, every=1)
        assert view.state is ObjectState.NODE_FAIL
        assert view.started
    finally:
        slurm_cluster.start_slurmd()


def test_a_preempted_job_ends_preempted(scheduler: SlurmCliScheduler, workdir: Path,
                                        slurm_cluster: SlurmTestCluster) -> None:
    name, nonce = new_name()
    whole_node = f"--cpus-per-task={slurm_cluster.cpus}"
    low = created(scheduler.create_held(ObjectSpec(name, nonce, command=("sleep", "120"), workdir=str(workdir),
                                                   options=(whole_node, "--no-requeue"))))
    scheduler.release(low)
    wait_for("RUNNING", lambda: (v := seen(scheduler, name, low)) and v.state is ObjectState.RUNNING)
    urgent_name, urgent_nonce = new_name()
    high = created(scheduler.create_held(ObjectSpec(urgent_name, urgent_nonce, command=("sleep", "1"),
                                                    workdir=str(workdir), options=(whole_node, "--partition=urgent"))))
    scheduler.release(high)
    view = wait_for("PREEMPTED", lambda: (v := seen(scheduler, name, low)) and v.state in ENDED and v,
                    timeout=90, every=1)
    assert (view.state, view.started) == (ObjectState.PREEMPTED, True)
    wait_for("the urgent job to finish", lambda: (v := seen(scheduler, urgent_name, high))
             and v.state is ObjectState.COMPLETED)


@pytest.mark.parametrize(("options", "said"), [
    (("--cpus-per-task=0",), 'Invalid numeric value "0" for --cpus-per-task'),
    (("--cpus-per-task=abc",), 'Invalid numeric value "abc" for --cpus-per-task'),
    (("--nosuchopt",), "sbatch: unrecognized option '--nosuchopt'"),
    (("--time=abc",), "Invalid --time specification"),
    (("--mem=1G", "--mem-per-cpu=1G"), "are mutually exclusive"),
])
def test_sbatchs_own_option_checks_are_refusals_quoted_whole(
        scheduler: SlurmCliScheduler, workdir: Path, options: tuple[str, ...], said: str) -> None:
    """Issue 22 item 1, on the real sbatch (found on PATH, so getopt names it by its path): an option
    sbatch rejects before it contacts the controller proves nothing was made."""
    name, nonce = new_name()
    answer = scheduler.create_held(ObjectSpec(name, nonce, command=("true",), workdir=str(workdir), options=options))
    assert answer.outcome is CreateOutcome.REFUSED, answer.detail
    assert said in answer.detail and "--help" not in answer.detail
    assert scheduler.query([name], confirm_absent=False).objects == ()


def test_a_jobs_needs_reach_sbatch_in_its_own_words(
        scheduler: SlurmCliScheduler, workdir: Path, slurm_cluster: SlurmTestCluster) -> None:
    """Issue 21: the domain's needs, translated by the Slurm adapter alone (queue → --partition, ...)."""
    from dunscaith.domain.model.jobs.resources import Resources

    name, nonce = new_name()
    needs = Resources(cpus=1, memory_mb=20, time_limit_s=90, queue="debug")
    oid = scheduler.create_held(ObjectSpec(name, nonce, command=("true",), workdir=str(workdir),
                                           resources=needs)).object_id
    assert oid is not None
    shown = slurm_cluster.run("scontrol", "-o", "show", "job", oid).stdout
    scheduler.cancel(oid)
    facts = dict(word.split("=", 1) for word in shown.split() if "=" in word)
    # Slurm keeps whole minutes: 90 s is rounded up to 2
    assert (facts["Partition"], facts["TimeLimit"], facts["NumCPUs"]) == ("debug", "00:02:00", "1"), shown
    assert facts["MinMemoryNode"] == "20M", shown
