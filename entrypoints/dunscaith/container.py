"""The ``dunscaith`` composition root: one container; tests override its providers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from adapters.clock.system import SystemClock
from adapters.host.system import SystemHost
from adapters.pointers.files import FilePointers, default_pointer_dir
from adapters.process.crash_points import EnvCrashPoints
from adapters.residual.files import FileResidualList, default_residual_dir
from entrypoints.dunscaith.settings import DunscaithSettings, load_settings

# Heavier pieces (the SQL store, the supervisor, the schedulers) are imported where they are built,
# so a command pays only for what it uses: `status` never loads the supervisor, `remote` no store.

# A test seam for "the root is on NFS": a mountinfo file to read instead of the kernel's.
MOUNTINFO_VARIABLE = "DUNSCAITH_TEST_MOUNTINFO"


def _host() -> SystemHost:
    mountinfo = os.environ.get(MOUNTINFO_VARIABLE)
    return SystemHost(mountinfo=Path(mountinfo)) if mountinfo else SystemHost()


def _sqlite_store(settings: DunscaithSettings, host: SystemHost) -> Iterator[Any]:
    from adapters.store.sqlite.store import SqliteStore

    store = SqliteStore.open(settings.records.root, host)
    try:
        yield store
    finally:
        store.close()


def _local_scheduler(settings: DunscaithSettings, crash: EnvCrashPoints):  # type: ignore[no-untyped-def]
    from adapters.scheduler.local.scheduler import LocalScheduler

    # the local scheduler's own durable steps of a release join the crash-point sweep as "local-<step>"
    return LocalScheduler(settings.records.root, checkpoint=lambda step: crash.reached(f"local-{step}"))


def _slurm_scheduler(settings: DunscaithSettings, cluster: str, clock: SystemClock):  # type: ignore[no-untyped-def]
    from adapters.scheduler.shared_query import SharedQueryScheduler
    from adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig

    t = settings.cluster(cluster)
    inner = SlurmCliScheduler(SlurmClusterConfig(
        name=cluster, bin_dir=t.bin_dir, env=dict(t.env), clusters=t.clusters, command_timeout=t.command_timeout,
        submit_timeout=t.submit_timeout, accounting=t.accounting, workdir=t.workdir))
    # every supervisor of this host shares one squeue per tick through the record root (docs/slurm.md)
    return SharedQueryScheduler(inner, settings.records.root / "slurm-queries" / cluster, clock,
                              max_age=t.coalesce_max_age)


def _schedulers(settings: DunscaithSettings, crash: EnvCrashPoints, clock: SystemClock) -> Any:
    """A cluster's name -> its scheduler, each opened once: a sweep looks up every cluster on the list."""
    opened: dict[str, Any] = {}

    def open_cluster(cluster: str) -> Any:
        if cluster not in opened:
            adapter = settings.cluster(cluster).adapter
            opened[cluster] = (_local_scheduler(settings, crash) if adapter == "local"
                               else _slurm_scheduler(settings, cluster, clock))
        return opened[cluster]

    return open_cluster


def _sweep(**ports: Any) -> Any:
    from domain.services.jobs.sweep import Sweep

    return Sweep(**ports)


def _emergency_stop(**ports: Any) -> Any:
    from domain.services.jobs.emergency_stop import EmergencyStop

    return EmergencyStop(**ports)


def _supervisor(settings: DunscaithSettings, **ports: Any) -> Any:
    from domain.model.jobs.policy import Policy
    from domain.model.jobs.residual import ResidualPolicy
    from domain.services.jobs.supervise import SuperviseSettings, Supervisor

    s = settings.supervise
    return Supervisor(**ports, settings=SuperviseSettings(poll=s.poll, poll_max=s.poll_max, giveup=s.giveup,
                                                           wait=s.wait, drain=s.drain),
                      policy=Policy(absence_deadline=timedelta(seconds=s.absence),
                                    residual=ResidualPolicy(settings.residual.policy)))


def _record_job(**ports: Any) -> Any:
    from domain.services.jobs.submit import RecordJob

    return RecordJob(**ports)


def _job_status(settings: DunscaithSettings, **ports: Any) -> Any:
    from domain.services.jobs.status import JobStatus

    return JobStatus(**ports, poll=settings.supervise.poll, delivering=bool(settings.escalations.command))


def _delivery(settings: DunscaithSettings) -> Any:
    from adapters.process.escalation_command import CommandEscalationDelivery

    return CommandEscalationDelivery(settings.escalations.command, settings.escalations.timeout)


def _signal_drain(settings: DunscaithSettings):  # type: ignore[no-untyped-def]
    from entrypoints.dunscaith.drain import SignalDrain

    return SignalDrain(settings.supervise.drain)


class Container(containers.DeclarativeContainer):
    settings = providers.Singleton(load_settings)
    cluster = providers.Object("local")  # the job's cluster, set by the command
    adapter = providers.Object("local")  # that cluster's adapter, set by the command

    clock = providers.Singleton(SystemClock)
    host = providers.Singleton(_host)
    crash = providers.Singleton(EnvCrashPoints)
    store = providers.Resource(_sqlite_store, settings=settings, host=host)
    pointers = providers.Singleton(lambda: FilePointers(default_pointer_dir()))
    residual = providers.Singleton(lambda: FileResidualList(default_residual_dir()))
    scheduler = providers.Selector(
        adapter,
        local=providers.Singleton(_local_scheduler, settings=settings, crash=crash),
        slurm=providers.Singleton(_slurm_scheduler, settings=settings, cluster=cluster, clock=clock),
    )

    schedulers = providers.Singleton(_schedulers, settings=settings, crash=crash, clock=clock)
    sweep = providers.Factory(_sweep, residual=residual, schedulers=schedulers, clock=clock)
    emergency_stop = providers.Factory(_emergency_stop, schedulers=schedulers, pointers=pointers)

    # the supervisor's cancellation: signals in the real program; tests put their own in
    cancellation = providers.Factory(_signal_drain, settings=settings)

    record_job = providers.Factory(_record_job, store=store, clock=clock, crash=crash)
    delivery = providers.Singleton(_delivery, settings=settings)
    supervisor = providers.Factory(_supervisor, settings=settings, store=store, scheduler=scheduler, clock=clock,
                                   crash=crash, delivery=delivery, residual=residual)
    status = providers.Factory(_job_status, settings=settings, store=store, clock=clock)
