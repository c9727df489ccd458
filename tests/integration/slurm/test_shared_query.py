"""Shared polling on a real Slurm: ten supervisors, one squeue per interval (counted by a shim)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.scheduler.shared_query import SharedQueryScheduler
from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.domain.model.jobs.objects import ObjectSpec, ObjectState
from tests.infra.slurm_bin import calls, make_bin_dir
from tests.integration.slurm.conftest import created, new_name

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def test_ten_supervisors_cost_one_squeue_per_interval(config: SlurmClusterConfig, scheduler: SlurmCliScheduler,
                                                      workdir: Path, tmp_path: Path) -> None:
    count = tmp_path / "calls"
    counted = dataclasses.replace(config, bin_dir=make_bin_dir(tmp_path / "bin", count_to=count))
    jobs = [new_name() for _ in range(10)]
    ids = [created(scheduler.create_held(ObjectSpec(n, nonce, command=("true",), workdir=str(workdir))))
           for n, nonce in jobs]
    clock = FakeClock()
    sups = [SharedQueryScheduler(SlurmCliScheduler(counted), tmp_path / "cache", clock) for _ in jobs]
    for sup, (name, _) in zip(sups, jobs, strict=True):
        sup.query([name], confirm_absent=True)  # each registers its name as it first asks
    for _ in range(2):
        clock.advance(seconds=5)
        before = len(calls(count))
        for sup, (name, nonce), oid in zip(sups, jobs, ids, strict=True):
            [view] = sup.query([name], confirm_absent=True).objects
            assert (view.object_id, view.nonce, view.state) == (oid, nonce, ObjectState.HELD)
        assert [c.split(" ")[0] for c in calls(count)[before:]] == ["squeue"]
    for oid in ids:
        scheduler.cancel(oid)
