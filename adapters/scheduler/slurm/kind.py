"""Slurm as a kind (``adapter = "slurm"``): what it declares of itself, its settings model and how one of
its clusters is opened (adapters/scheduler/opening.py). Its scheduler is imported only when opened."""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import timedelta
from typing import TYPE_CHECKING

from dunscaith.domain.model.jobs.kinds import SchedulerCapabilities

if TYPE_CHECKING:
    from dunscaith.adapters.kind_settings import ClusterSettings
    from dunscaith.adapters.scheduler.opening import Opening
    from dunscaith.adapters.scheduler.slurm.config import SlurmClusterConfig
    from dunscaith.adapters.scheduler.slurm.settings import SlurmClusterSettings
    from dunscaith.ports.cluster_probe import ClusterProbe
    from dunscaith.ports.scheduler import Scheduler

# A cluster's objects are reached from any login node, and Slurm does everything the port asks.
CAPABILITIES = SchedulerCapabilities()


def settings_model() -> type[ClusterSettings]:
    from dunscaith.adapters.scheduler.slurm.settings import SlurmClusterSettings

    return SlurmClusterSettings


def _table(opening: Opening) -> SlurmClusterSettings:
    from dunscaith.adapters.scheduler.slurm.settings import SlurmClusterSettings

    return opening.table_as(SlurmClusterSettings)


def _config(opening: Opening) -> SlurmClusterConfig:
    from dunscaith.adapters.scheduler.slurm.config import SlurmClusterConfig

    t = _table(opening)
    return SlurmClusterConfig(
        name=opening.cluster, bin_dir=t.bin_dir, env=dict(t.env), clusters=t.clusters,
        command_timeout=t.command_timeout, submit_timeout=t.submit_timeout,
        submit_timeout_unknown_floor=t.submit_timeout_unknown_floor, accounting=t.accounting,
        accounting_lookback=timedelta(seconds=t.accounting_lookback), workdir=t.workdir)


def open_scheduler(opening: Opening) -> AbstractContextManager[Scheduler]:
    from dunscaith.adapters.scheduler.shared_query import shared_on_this_host
    from dunscaith.adapters.scheduler.slurm.scheduler import SlurmCliScheduler

    max_age = _table(opening).coalesce_max_age
    inner = SlurmCliScheduler(_config(opening), say=opening.say)
    # every supervisor of this host shares one squeue per tick through the scheduler state root (docs/slurm.md)
    # (a SharedArrayQueryScheduler: Slurm makes a sweep's objects as one job array, ports.scheduler.CreatesArrays)
    return shared_on_this_host(inner, opening, "slurm-queries", max_age)


def open_probe(opening: Opening) -> ClusterProbe:
    from dunscaith.adapters.scheduler.slurm.config import SlurmClusterConfig
    from dunscaith.adapters.scheduler.slurm.probe import SlurmProbe

    t = _table(opening)
    return SlurmProbe(SlurmClusterConfig(name=opening.cluster, bin_dir=t.bin_dir, env=dict(t.env), clusters=t.clusters,
                                         accounting=t.accounting))
