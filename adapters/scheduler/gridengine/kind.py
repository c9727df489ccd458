"""Grid Engine as a kind (``adapter = "gridengine"``): what it declares of itself, its settings model and how
one of its clusters is opened (adapters/scheduler/opening.py). Its scheduler is imported only when opened."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from dunscaith.domain.model.jobs.kinds import SchedulerCapabilities

if TYPE_CHECKING:
    from dunscaith.adapters.kind_settings import ClusterSettings
    from dunscaith.adapters.scheduler.gridengine.config import GridEngineConfig
    from dunscaith.adapters.scheduler.gridengine.settings import GridEngineClusterSettings
    from dunscaith.adapters.scheduler.opening import Opening
    from dunscaith.ports.cluster_probe import ClusterProbe
    from dunscaith.ports.scheduler import Scheduler

# A cluster's jobs are reached from any submit host; a requeue the scheduler refuses in one line where Grid
# Engine cannot (a job not running, or not rerunnable): nothing is refused before asking.
CAPABILITIES = SchedulerCapabilities()


def settings_model() -> type[ClusterSettings]:
    from dunscaith.adapters.scheduler.gridengine.settings import GridEngineClusterSettings

    return GridEngineClusterSettings


def _table(opening: Opening) -> GridEngineClusterSettings:
    from dunscaith.adapters.scheduler.gridengine.settings import GridEngineClusterSettings

    return opening.table_as(GridEngineClusterSettings)


def config(opening: Opening) -> GridEngineConfig:
    from dunscaith.adapters.scheduler.gridengine.config import GridEngineConfig

    t = _table(opening)
    return GridEngineConfig(
        name=opening.cluster,
        bin_dir=t.bin_dir,
        env=dict(t.env),
        parallel_environment=t.parallel_environment,
        command_timeout=t.command_timeout,
        submit_timeout=t.submit_timeout,
        workdir=t.workdir,
        ledger_dir=opening.state_root / "gridengine" / opening.cluster,
    )


def open_scheduler(opening: Opening) -> AbstractContextManager[Scheduler]:
    from dunscaith.adapters.scheduler.gridengine.scheduler import GridEngineScheduler
    from dunscaith.adapters.scheduler.shared_query import shared_on_this_host

    max_age = _table(opening).coalesce_max_age
    # every supervisor of this host shares one qstat per tick through the scheduler state root, as Slurm's share squeue
    return shared_on_this_host(GridEngineScheduler(config(opening)), opening, "gridengine-queries", max_age)


def open_probe(opening: Opening) -> ClusterProbe:
    from dunscaith.adapters.scheduler.gridengine.probe import GridEngineProbe

    return GridEngineProbe(config(opening))
