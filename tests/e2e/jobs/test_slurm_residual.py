"""Sweeps and the emergency stop on a real Slurm 22.05 (skipped, naming what is missing, without it)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from datetime import UTC, datetime

import pytest

from dunscaith.adapters.residual.files import FileResidualList
from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.objects import ENDED, ObjectSpec, ObjectState
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReason
from tests.e2e.jobs.cli import Cli, await_condition, await_state
from tests.infra.slurm import SlurmTestCluster

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def _direct(slurm: SlurmTestCluster, cli: Cli) -> SlurmCliScheduler:
    return SlurmCliScheduler(SlurmClusterConfig(name="test", env=slurm.env, workdir=cli.tmp))


def _state(direct: SlurmCliScheduler, job: str, object_id: str) -> ObjectState | None:
    found = [v for v in direct.query([JobId(job)], confirm_absent=False).objects if v.object_id == object_id]
    return found[0].state if found else None


def test_emergency_stop_on_slurm_with_the_whole_record_root_deleted(on_slurm: Cli, slurm: SlurmTestCluster) -> None:
    job = "slurm-runaway"
    supervisor = on_slurm.start("submit", "--cluster", "test", "--name", job, "--", "sleep", "300")
    try:
        await_state(on_slurm, job, "running", timeout=120)
    finally:
        os.killpg(supervisor.pid, signal.SIGKILL)
        supervisor.wait()
    shutil.rmtree(on_slurm.root)
    shutil.rmtree(on_slurm.tmp / "home" / ".config" / "dunscaith" / "jobs")
    done = on_slurm.run("stop", "--emergency", job, "--cluster", "test", "--json", timeout=120)
    assert done.returncode == 0, (done.stdout, done.stderr)
    stopped = json.loads(done.stdout)["stopped"]
    assert len(stopped) == 1
    direct = _direct(slurm, on_slurm)
    await_condition(lambda: _state(direct, job, stopped[0]) in ENDED | {None}, timeout=60, what="scancel")
    assert not on_slurm.root.exists()  # no store was opened, none made


def test_a_sweep_on_slurm_stops_a_listed_held_job_and_never_a_running_or_foreign_one(
        on_slurm: Cli, slurm: SlurmTestCluster) -> None:
    direct = _direct(slurm, on_slurm)
    late = direct.create_held(ObjectSpec(JobId("slurm-lost"), Nonce("s1"), ("true",))).object_id
    foreign = direct.create_held(ObjectSpec(JobId("slurm-lost"), Nonce("nobodys"), ("true",))).object_id
    running = direct.create_held(ObjectSpec(JobId("slurm-lost2"), Nonce("s2"), ("sleep", "120"))).object_id
    assert late and foreign and running
    try:
        direct.release(running)
        await_condition(lambda: _state(direct, "slurm-lost2", running) is ObjectState.RUNNING, timeout=60,
                        what="the job to run")
        listing = FileResidualList(on_slurm.tmp / "home" / ".config" / "dunscaith" / "residual")
        for name, nonce in (("slurm-lost", "s1"), ("slurm-lost2", "s2")):
            listing.add(ResidualEntry(JobId(name), "test", "slurm", ResidualReason.UNKNOWN, 1, Nonce(nonce),
                                      datetime.now(UTC)))
        done = on_slurm.run("submit", "--name", "other", "--", "true", timeout=180)
        assert done.returncode == 0, done.stderr
        assert f"sweep: stopped {late} on cluster test" in done.stderr
        await_condition(lambda: _state(direct, "slurm-lost", late) in ENDED | {None}, timeout=60, what="scancel")
        assert _state(direct, "slurm-lost", foreign) is ObjectState.HELD
        assert _state(direct, "slurm-lost2", running) is ObjectState.RUNNING
    finally:
        for object_id in (foreign, running):
            direct.cancel(object_id)


def test_requeue_then_cancel_on_slurm_with_a_live_supervisor(on_slurm: Cli, slurm: SlurmTestCluster) -> None:
    job = "slurm-commands"
    supervisor = on_slurm.start("submit", "--cluster", "test", "--name", job, "--", "sleep", "300")
    try:
        await_state(on_slurm, job, "running", timeout=120)
        requeued = on_slurm.run("requeue", job, "--json", timeout=180)
        assert requeued.returncode == 0, (requeued.stdout, requeued.stderr)
        answer = json.loads(requeued.stdout)
        assert (answer["answer"], answer["by"]) == ("confirmed", "its supervisor")

        def requeued_once() -> bool:
            events = on_slurm.status(job)["requests"]
            return len(events) == 1 and events[0]["answer"] == "confirmed"

        await_condition(requeued_once, 60, "the requeue to be answered")
        cancelled = on_slurm.run("cancel", job, timeout=180)
        assert cancelled.returncode == 0, (cancelled.stdout, cancelled.stderr)
        assert supervisor.wait(timeout=180) == 1
        status = on_slurm.status(job)
        assert status["outcome"]["result"] == "cancelled" and status["settled"]
        assert len(status["attempts"]) == 1  # a requeue is no new attempt
        from dunscaith.adapters.host.system import SystemHost
        from dunscaith.adapters.store.sqlite.store import SqliteStore

        with SqliteStore.open(on_slurm.root, SystemHost()) as store:
            kinds = [line.kind for line in store.read(JobId(job)).events]
        assert kinds.count("requeueing") == kinds.count("requeued") == 1
    finally:
        on_slurm.run("stop", "--emergency", job, "--cluster", "test", timeout=120)
        if supervisor.poll() is None:
            supervisor.kill()
