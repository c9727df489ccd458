"""The ``dunscaith`` composition root: the adapters in one container, the use cases in another, composed.

``Adapters`` is the one place that names a technology: the store (chosen by ``records.backend``), a
cluster's scheduler, pointers, the residual list, clock, host, crash points, escalation delivery,
interrupts and the live view. ``UseCases`` builds every use case from dunscaith.ports only. Tests swap the whole
adapter set at once: ``container.adapters.override(FakeAdapters())`` (tests/fakes/dunscaith_adapters.py).

Every adapter is imported where it is built, so a command pays only for what it uses; ``remote`` builds
no container at all. The builders of what ``status`` and ``list`` use (the SQLite store, pointers, the
residual list, clock, host, crash points, a cluster's scheduler) are ``read_root.py``'s: the front door's
plain ``status``/``list`` builds its root from the same ones without dependency-injector, and these
providers name them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing
from typing import IO, TYPE_CHECKING, Any

from dependency_injector import containers, providers

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.services.jobs.listing import JobListing
from dunscaith.domain.services.jobs.owning_host import OwningHost
from dunscaith.domain.services.jobs.pointer_survey import PointerSurveys
from dunscaith.domain.services.jobs.status import JobStatus
from dunscaith.domain.services.jobs.store_check import StoreCheck
from dunscaith.domain.services.jobs.sweep import Sweep
from dunscaith.entrypoints.dunscaith import kinds
from dunscaith.entrypoints.dunscaith import read_root as built
from dunscaith.entrypoints.dunscaith import submit_root as built_submit
from dunscaith.entrypoints.dunscaith.install import own_binary
from dunscaith.entrypoints.dunscaith.read_root import ClusterSchedulers
from dunscaith.entrypoints.dunscaith.settings import DunscaithSettings, load_settings
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.job_progress import SweepSupervisionView
from dunscaith.ports.job_store import JobStore
from dunscaith.ports.residual import ResidualList
from dunscaith.ports.scheduler import Scheduler

# What only some commands use is imported when its provider is first called (status and list never load
# the supervisor, the escalation command, the signals, the live view or another command's use case).
if TYPE_CHECKING:
    from dunscaith.adapters.store.opening import StoreOpening
    from dunscaith.domain.services.jobs.check import CheckCluster
    from dunscaith.domain.services.jobs.commands import JobCommands
    from dunscaith.domain.services.jobs.doctor import Doctor
    from dunscaith.domain.services.jobs.emergency_stop import EmergencyStop
    from dunscaith.domain.services.jobs.notify_sweep import NotifySweep
    from dunscaith.domain.services.jobs.pointer_notes import PointerNotes
    from dunscaith.domain.services.jobs.prune import Prune
    from dunscaith.domain.services.jobs.submit import RecordSweep
    from dunscaith.domain.services.jobs.supervise_sweep import SuperviseSweep
    from dunscaith.domain.services.jobs.sweep_commands import SweepCommands
    from dunscaith.domain.services.jobs.sweep_status import SweepStatus
    from dunscaith.domain.services.jobs.timeline import JobEvents
    from dunscaith.domain.services.jobs.watch import WatchJob
    from dunscaith.ports.cluster_probe import ClusterProbe
    from dunscaith.ports.host import HostInfo
    from dunscaith.ports.pointers import Pointers

# A test seam for "the root is on NFS": a mountinfo file to read instead of the kernel's.
MOUNTINFO_VARIABLE = built.MOUNTINFO_VARIABLE


# --- adapters ---------------------------------------------------------------------------------------------
# The builders status and list need (the store, pointers, host, a cluster's scheduler...) are read_root.py's:
# the front door's plain read path builds its root from the same ones, without dependency-injector.
def _schedulers(settings: DunscaithSettings,
                kinds: Callable[..., AbstractContextManager[Scheduler]]) -> Iterator[Callable[[str], Scheduler]]:
    opened = ClusterSchedulers(lambda cluster: settings.cluster(cluster).adapter, kinds)
    try:
        yield opened
    finally:
        opened.close()


def _scheduler_kinds(settings: DunscaithSettings, clock: Clock,
                     crash: CrashPoints) -> Callable[..., AbstractContextManager[Scheduler]]:
    return built.scheduler_kinds(settings.records.root, settings.cluster, lambda: clock, lambda: crash)


def _probe_kinds(settings: DunscaithSettings, clock: Clock, crash: CrashPoints) -> Callable[..., ClusterProbe]:
    from dunscaith.adapters.scheduler.opening import Opening

    def probe(kind: str, *, cluster: str) -> ClusterProbe:
        opening = Opening(cluster, lambda: settings.cluster(cluster), settings.records.root, lambda: clock,
                          lambda: crash, built.say)  # a probe terminates nothing
        return kinds.open_probe(kind, opening)

    return probe


def _sweep_view(sweep: JobId, stream: IO[str] | None = None) -> SweepSupervisionView:
    from dunscaith.adapters.progress.sweep_view import SweepLiveView

    return SweepLiveView(sweep, stream)


def _notify_sweep(**ports: Any) -> NotifySweep:
    from dunscaith.domain.services.jobs.notify_sweep import NotifySweep

    return NotifySweep(**ports)


def _hostname(host: HostInfo) -> str:
    return host.identity().hostname


def _store_opening(settings: DunscaithSettings, host: HostInfo, pointers: Pointers) -> StoreOpening:
    return built.store_opening(settings.records.root, host, pointers, lambda: settings.records)


def shown_records_url(url: str) -> str:
    """``records.url`` as ``config show`` prints it: the stores' own rule masks any password in it."""
    from dunscaith.adapters.store.postgres.target import shown_url

    return shown_url(url)


class Adapters(containers.DeclarativeContainer):
    """Every technology dunscaith's job commands use; a test overrides this set as a whole."""

    settings = providers.Dependency(instance_of=DunscaithSettings)

    clock = providers.Singleton(built.clock)
    host = providers.Singleton(built.host)
    crash = providers.Singleton(built.crash_points)
    pointers = providers.Singleton(built.pointers, crash=crash)
    # records.backend chooses the store, opened once and closed with the command, by its kind's package
    # (registered in kinds.py: docs/architecture.md "Add a store backend")
    store_opening = providers.Factory(_store_opening, settings=settings, host=host, pointers=pointers)
    store: providers.Provider[JobStore] = providers.Resource(
        closing, providers.Factory(built.open_store, settings.provided.records.backend, store_opening))
    # whether there is a store to look in, asked without making one (none on a login node where nothing was
    # recorded; a server's is always there); a root that could never hold one is refused as opening it would
    store_exists: providers.Provider[bool] = providers.Callable(built.store_exists, settings.provided.records.backend,
                                                                store_opening)
    # a cluster's adapter -> how to open one of its clusters (cluster=): by its kind's package, registered
    # in kinds.py (docs/architecture.md "Add a scheduler")
    scheduler_kinds = providers.Factory(_scheduler_kinds, settings=settings, clock=clock, crash=crash)
    schedulers: providers.Provider[Callable[[str], Scheduler]] = providers.Resource(
        _schedulers, settings=settings, kinds=scheduler_kinds)
    root_host = providers.Object(built.root_host)  # a record root's HOST, for a pointer naming another root
    # what `dunscaith check` asks a cluster besides the scheduler port (kind, cluster=), by its kind's package
    probe_kinds = providers.Factory(_probe_kinds, settings=settings, clock=clock, crash=crash)
    # each store's own checks, declared by its kind (records.backend, as the store): before a command's first
    # side effect outside the store (SQLite's page check; PostgreSQL's one job's damage is that job's only),
    # and for doctor (both stores' whole-store checks)
    store_integrity: providers.Provider[Callable[[JobStore], str | None]] = providers.Callable(
        built.write_check, settings.provided.records.backend)
    doctor_integrity: providers.Provider[Callable[[JobStore], str | None]] = providers.Callable(
        built.doctor_check, settings.provided.records.backend)
    residual = providers.Singleton(built.residual)
    delivery = providers.Singleton(built_submit.delivery, settings=settings)
    notices = providers.Singleton(built_submit.notices, settings=settings)  # notify.command (docs/notifications.md)
    interrupts = providers.Singleton(built_submit.interrupts, settings=settings)
    progress = providers.Factory(built_submit.progress)  # the live view of one supervision (job=, stream=, follow=)
    sweep_view = providers.Factory(_sweep_view)  # the live view of one sweep's supervision (sweep=, stream=)
    # a job's output files, read for display (logs, --follow)
    output_files = providers.Singleton(built_submit.output_files)


# --- use cases --------------------------------------------------------------------------------------------
def _check(settings: DunscaithSettings, schedulers: Callable[[str], Scheduler],
           probe_kinds: Callable[..., ClusterProbe], residual: ResidualList, clock: Clock, *,
           cluster: str) -> CheckCluster:
    import secrets

    from dunscaith.domain.services.jobs.check import CheckCluster

    adapter = settings.cluster(cluster).adapter
    return CheckCluster(probe_kinds(adapter, cluster=cluster), schedulers(cluster), residual, clock,
                        lambda: secrets.token_hex(8), cluster, adapter)


# Each use case below that status and list never use is imported when its provider is first called.
def _record_sweep(**ports: Any) -> RecordSweep:
    from dunscaith.domain.services.jobs.submit import RecordSweep

    return RecordSweep(capabilities=kinds.capabilities, **ports)


def _job_commands(**ports: Any) -> JobCommands:
    from dunscaith.domain.services.jobs.commands import JobCommands

    return JobCommands(**ports)


def _sweep_commands(**ports: Any) -> SweepCommands:
    from dunscaith.domain.services.jobs.sweep_commands import SweepCommands

    return SweepCommands(**ports)


def _sweep_status(**ports: Any) -> SweepStatus:
    from dunscaith.domain.services.jobs.sweep_status import SweepStatus

    return SweepStatus(**ports)


def _prune(**ports: Any) -> Prune:
    from dunscaith.domain.services.jobs.prune import Prune

    return Prune(**ports)


def _emergency_stop(**ports: Any) -> EmergencyStop:
    from dunscaith.domain.services.jobs.emergency_stop import EmergencyStop

    return EmergencyStop(capabilities=kinds.capabilities, **ports)


def _doctor(**ports: Any) -> Doctor:
    from dunscaith.domain.services.jobs.doctor import Doctor

    return Doctor(**ports)


def _pointer_notes(**ports: Any) -> PointerNotes:
    from dunscaith.domain.services.jobs.pointer_notes import PointerNotes

    return PointerNotes(**ports)


def _job_events(**ports: Any) -> JobEvents:
    from dunscaith.domain.services.jobs.timeline import JobEvents

    return JobEvents(**ports)


def _watch_job(**ports: Any) -> WatchJob:
    from dunscaith.domain.services.jobs.watch import WatchJob

    return WatchJob(**ports)


def _supervise_sweep(**ports: Any) -> SuperviseSweep:
    from dunscaith.domain.services.jobs.supervise_sweep import SuperviseSweep

    return SuperviseSweep(**ports)


def _watch_interval(settings: DunscaithSettings) -> float:
    """How often ``watch`` looks at the job's lock (and reads its record where the store tells of no
    append): supervise.poll, at most 2 s, so a supervisor's end shows soon even when the poll is long."""
    return min(settings.supervise.poll, 2.0)


def _delivering(settings: DunscaithSettings) -> bool:
    return bool(settings.escalations.command)


class UseCases(containers.DeclarativeContainer):
    """Every use case of the job commands, built from the adapters' ports."""

    settings = providers.Dependency(instance_of=DunscaithSettings)
    adapters = providers.DependenciesContainer()
    delivering = providers.Callable(_delivering, settings)

    record_job = providers.Factory(built_submit.record_job, store=adapters.store, clock=adapters.clock,
                                   crash=adapters.crash, host=adapters.host, schedulers=adapters.schedulers,
                                   pointers=adapters.pointers)
    # every element of a sweep, in one transaction (submit --array/--each)
    record_sweep = providers.Factory(_record_sweep, store=adapters.store, clock=adapters.clock, crash=adapters.crash,
                                     host=adapters.host, schedulers=adapters.schedulers, pointers=adapters.pointers)
    # the supervisor of one job (cluster=, progress=)
    supervisor = providers.Factory(built_submit.supervisor, settings=settings, store=adapters.store,
                                   schedulers=adapters.schedulers, clock=adapters.clock, crash=adapters.crash,
                                   delivery=adapters.delivery, residual=adapters.residual,
                                   notifier=providers.Factory(built_submit.notifier, settings=settings,
                                                              delivery=adapters.notices, clock=adapters.clock,
                                                              store=adapters.store,
                                                              here=providers.Callable(_hostname, adapters.host)))
    # the job commands (supervisor=: how to make the supervisor a command acts with under the lock)
    job_commands = providers.Factory(_job_commands, store=adapters.store, clock=adapters.clock,
                                     crash=adapters.crash, wait=settings.provided.commands.wait)
    # the job commands on a sweep or chosen elements (commands=: the job commands acting on one element)
    sweep_commands = providers.Factory(_sweep_commands, store=adapters.store, clock=adapters.clock,
                                       wait=settings.provided.commands.wait)
    # `status NAME` of a sweep and list's one row for it: the elements' summaries, never a fold each
    sweep_status = providers.Factory(_sweep_status, store=adapters.store)
    prune = providers.Factory(_prune, store=adapters.store, residual=adapters.residual, pointers=adapters.pointers,
                              clock=adapters.clock, crash=adapters.crash, delivering=delivering)
    sweep = providers.Factory(Sweep, residual=adapters.residual, schedulers=adapters.schedulers,
                              clock=adapters.clock)
    emergency_stop = providers.Factory(_emergency_stop, schedulers=adapters.schedulers, pointers=adapters.pointers,
                                       here=adapters.host.provided.identity.call())
    # `dunscaith check CLUSTER` (cluster=)
    check = providers.Factory(_check, settings=settings, schedulers=adapters.schedulers,
                              probe_kinds=adapters.probe_kinds, residual=adapters.residual,
                              clock=adapters.clock)
    status = providers.Factory(JobStatus, store=adapters.store, clock=adapters.clock,
                               poll=settings.provided.supervise.poll, delivering=delivering,
                               schedulers=adapters.schedulers)
    # `dunscaith events JOB`: the record read once, as a timeline
    job_events = providers.Factory(_job_events, store=adapters.store)
    # what is wrong with this host's records, reported and never repaired (the store opened inside it)
    doctor = providers.Factory(_doctor, open_store=adapters.store.provider, integrity=adapters.doctor_integrity,
                               pointers=adapters.pointers, residual=adapters.residual,
                               here=adapters.host.provided.identity.call())
    listing = providers.Factory(JobListing, store=adapters.store, clock=adapters.clock,
                                poll=settings.provided.supervise.poll, delivering=delivering)
    # other hosts' jobs and damaged pointers, from the index of pointers not settled (shared=)
    pointer_surveys = providers.Factory(PointerSurveys, pointers=adapters.pointers, clock=adapters.clock,
                                        poll=settings.provided.supervise.poll,
                                        here=adapters.host.provided.identity.call())
    # the job's pointer kept in step with its record (pointer=, on_problem=)
    pointer_notes = providers.Factory(_pointer_notes, pointers=adapters.pointers,
                                      poll=settings.provided.supervise.poll)
    # where a job's output is, what it says (logs, a failure's last lines) and prune --outputs
    job_outputs = providers.Factory(built_submit.job_outputs, files=adapters.output_files,
                                    schedulers=adapters.schedulers, clock=adapters.clock,
                                    record_root=providers.Callable(str, settings.provided.records.root))
    # the store opened and checked before a command acts (a store that cannot be opened raises here)
    store_check = providers.Factory(StoreCheck, store=adapters.store, integrity=adapters.store_integrity)
    # the live view of a job supervised elsewhere, from its record (``watch``): reads only
    watch_job = providers.Factory(_watch_job, store=adapters.store, views=adapters.progress.provider,
                                  interval=providers.Callable(_watch_interval, settings), delivering=delivering)
    # here, or the host that owns a job (its pointer, or its record's binding)
    # whether there is a store to look in, asked without making one (Adapters.store_exists)
    store_exists = providers.Callable(bool, adapters.store_exists)
    shared_location = providers.Callable(built.shared_location, settings.provided.records.backend,
                                         adapters.store.provider)
    owning_host = providers.Factory(OwningHost, pointers=adapters.pointers, here=adapters.host.provided.identity.call(),
                                    shared_location=shared_location, root_host=adapters.root_host,
                                    capabilities=providers.Object(kinds.capabilities))
    # one supervision from the command line (on_problem=, on_sweep=: how the command shows them)
    supervise_job = providers.Factory(built_submit.supervise_job, store=adapters.store, pointers=adapters.pointers,
                                      owning=owning_host,
                                      here=adapters.host.provided.identity.call(),
                                      binary=providers.Callable(own_binary), supervisor=supervisor.provider,
                                      views=adapters.progress.provider, sweep=sweep, outputs=job_outputs,
                                      poll=settings.provided.supervise.poll)
    # one supervision of a sweep's elements (one=: the supervise_job above, with the command's on_problem)
    supervise_sweep = providers.Factory(_supervise_sweep, store=adapters.store, supervisor=supervisor.provider,
                                        views=adapters.sweep_view.provider, schedulers=adapters.schedulers,
                                        clock=adapters.clock, crash=adapters.crash)
    # a sweep's one notice for its outcome (docs/notifications.md)
    notify_sweep = providers.Factory(_notify_sweep, store=adapters.store, delivery=adapters.notices,
                                     clock=adapters.clock, crash=adapters.crash,
                                     wait=settings.provided.supervise.wait,
                                     first_backoff=settings.provided.supervise.poll)


class Container(containers.DeclarativeContainer):
    settings = providers.Singleton(load_settings)
    adapters = providers.Container(Adapters, settings=settings)
    use_cases = providers.Container(UseCases, settings=settings, adapters=adapters)
