"""The ``dunscaith`` CLI's composition root: every adapter and use case declared once, with what it is built from.

``PARTS`` is the one declaration: a name -> a plain builder function and the names it is built from
(``Part``). Both resolvers are made from it, so they cannot wire anything differently:

- ``container.Container`` (dependency-injector): one provider per part, in an ``Adapters`` and a
  ``UseCases`` container, which a test overrides as a whole (``container.adapters.override(FakeAdapters())``)
  or one provider at a time;
- ``Root`` here: the same parts resolved by hand, each made when first asked for (a singleton or a
  resource once), without importing dependency-injector. Every command the console script runs resolves
  through it: importing dependency-injector costs more than ``import typer`` on its own
  (docs/architecture.md "Composition roots", with the figures).

A builder's parameters are the names of the parts it is built from (``settings``: the settings tree); a
name written ``@NAME`` hands the builder ``make_NAME``, a function that makes that part (a provider), and
keyword-only parameters are what the caller gives (``supervisor(cluster=, progress=)``). ``Part.scope``:
``factory`` (made at every ask), ``singleton`` (once per command), ``resource`` (a generator: made once,
closed by ``shutdown_resources``), ``object`` (the builder is the value itself).

Every adapter is imported inside its builder, so a command pays only for what it uses.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from dunscaith.adapters.crash_points.env import EnvCrashPoints
    from dunscaith.adapters.escalation.command import CommandEscalationDelivery
    from dunscaith.adapters.escalation.notice_command import CommandNoticeDelivery
    from dunscaith.adapters.host.system import SystemHost
    from dunscaith.adapters.kind_settings import ClusterSettings
    from dunscaith.adapters.pointers.files import FilePointers
    from dunscaith.adapters.progress.output_files import OutputFiles
    from dunscaith.adapters.progress.terminal import TerminalProgress
    from dunscaith.adapters.residual.files import FileResidualList
    from dunscaith.adapters.scheduler.local.spawn import TerminateAnswer
    from dunscaith.adapters.signals.posix import SignalInterrupts
    from dunscaith.adapters.store.opening import OpenedStore, StoreOpening
    from dunscaith.domain.model.jobs.ids import JobId
    from dunscaith.domain.model.jobs.record import HostIdentity
    from dunscaith.domain.services.jobs.check import CheckCluster
    from dunscaith.domain.services.jobs.commands import JobCommands
    from dunscaith.domain.services.jobs.doctor import Doctor
    from dunscaith.domain.services.jobs.emergency_stop import EmergencyStop
    from dunscaith.domain.services.jobs.job_output import JobOutputs
    from dunscaith.domain.services.jobs.listing import JobListing
    from dunscaith.domain.services.jobs.notify import Notifier
    from dunscaith.domain.services.jobs.notify_sweep import NotifySweep
    from dunscaith.domain.services.jobs.owning_host import OwningHost
    from dunscaith.domain.services.jobs.pointer_notes import PointerNotes
    from dunscaith.domain.services.jobs.pointer_survey import PointerSurveys
    from dunscaith.domain.services.jobs.prune import Prune
    from dunscaith.domain.services.jobs.status import JobStatus
    from dunscaith.domain.services.jobs.store_check import StoreCheck
    from dunscaith.domain.services.jobs.submit import RecordJob, RecordPipeline, RecordSweep
    from dunscaith.domain.services.jobs.supervise import Supervisor
    from dunscaith.domain.services.jobs.supervise_job import SuperviseJob
    from dunscaith.domain.services.jobs.supervise_sweep import SuperviseSweep
    from dunscaith.domain.services.jobs.sweep import Sweep
    from dunscaith.domain.services.jobs.sweep_commands import SweepCommands
    from dunscaith.domain.services.jobs.sweep_status import SweepStatus
    from dunscaith.domain.services.jobs.timeline import JobEvents
    from dunscaith.domain.services.jobs.watch import WatchJob
    from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings
    from dunscaith.ports.clock import Clock
    from dunscaith.ports.cluster_probe import ClusterProbe
    from dunscaith.ports.crash_points import CrashPoints
    from dunscaith.ports.escalation_delivery import EscalationDelivery
    from dunscaith.ports.host import HostInfo
    from dunscaith.ports.job_progress import JobProgress, SupervisionView, SweepSupervisionView
    from dunscaith.ports.job_store import JobStore
    from dunscaith.ports.notice_delivery import NoticeDelivery
    from dunscaith.ports.pointers import Pointers
    from dunscaith.ports.residual import ResidualList
    from dunscaith.ports.scheduler import Scheduler

    # the validated tree, or (the front door's plain paths) the same tree remembered, read as plain data
    # through the model's names (settings_view.py)
    Settings = DunscaithSettings

# A test seam for "the root is on NFS": a mountinfo file to read instead of the kernel's.
MOUNTINFO_VARIABLE = "DUNSCAITH_TEST_MOUNTINFO"


class Part(NamedTuple):
    """One adapter or use case: how it is built and from which parts (see the module's docstring)."""

    build: Callable[..., Any]
    needs: tuple[str, ...] = ()
    scope: str = "factory"


def param(need: str) -> str:
    """The builder's parameter a need is handed as: the part itself, or (``@NAME``) its maker ``make_NAME``."""
    return f"make_{need[1:]}" if need.startswith("@") else need


def say(line: str) -> None:
    """A scheduler's word while a call waits (docs/slurm.md): on stderr, where notices go (json.md too)."""
    print(f"dunscaith: {line}", file=sys.stderr, flush=True)


# --- the adapters -----------------------------------------------------------------------------------------
def host() -> SystemHost:
    from dunscaith.adapters.host.system import SystemHost

    mountinfo = os.environ.get(MOUNTINFO_VARIABLE)
    return SystemHost(mountinfo=Path(mountinfo)) if mountinfo else SystemHost()


def clock() -> Clock:
    from dunscaith.adapters.clock.system import SystemClock

    return SystemClock()


def crash() -> EnvCrashPoints:
    from dunscaith.adapters.crash_points.env import EnvCrashPoints

    return EnvCrashPoints()


def pointers(crash: CrashPoints) -> FilePointers:
    from dunscaith.adapters.pointers.files import FilePointers, default_pointer_dir

    # the index's steps join the crash-point sweep: "pointer-indexed", "pointer-settled"
    return FilePointers(default_pointer_dir(), checkpoint=crash.reached)


def residual() -> FileResidualList:
    from dunscaith.adapters.residual.files import FileResidualList, default_residual_dir

    return FileResidualList(default_residual_dir())


def store_opening(settings: Settings, host: HostInfo, pointers: Pointers | None = None) -> StoreOpening:
    """What a store kind is opened with: records.root, this host, its pointers, and the [records] table
    (read only by a kind that needs more than the root: a server's URL)."""
    from dunscaith.adapters.store.opening import StoreOpening
    from dunscaith.domain.services.jobs.store_creation import StoreCreation

    def recorded_in(location: str) -> Sequence[str]:
        assert pointers is not None, "this store was opened without the pointers"
        return StoreCreation(pointers, host.identity()).named_by_pointers(location)

    return StoreOpening(settings.records.root, lambda: host, recorded_in, lambda: settings.records)


def open_store(backend: str, opening: StoreOpening) -> OpenedStore:
    """The store ``records.backend`` names, by its kind's package (kinds.py)."""
    from dunscaith.entrypoints.dunscaith.root.kinds import store

    opened = store(backend).open_store(opening)
    if opened.read_unlocked is not None:  # a full or read-only root still reads (docs/record-backing.md)
        say(
            f"read without a lock: the record root is {opened.read_unlocked}; what is shown may be a moment old, "
            "and nothing can be recorded there now"
        )
    return opened


def store(settings: Settings, store_opening: StoreOpening) -> Iterator[JobStore]:
    """records.backend chooses the store, opened once and closed with the command, by its kind's package
    (registered in kinds.py: docs/architecture.md "Add a store backend")."""
    opened = open_store(settings.records.backend, store_opening)
    yield opened
    opened.close()  # at the command's end (a store never closed: its process ends)


def store_exists(settings: Settings, store_opening: StoreOpening) -> bool:
    """Whether there is a store to look in, asked without making one (none on a login node where nothing
    was recorded; a server's is always there); a root that could never hold one is refused as opening it would."""
    from dunscaith.entrypoints.dunscaith.root.kinds import store

    return store(settings.records.backend).store_exists(store_opening)


def store_integrity(settings: Settings) -> Callable[[JobStore], str | None]:
    """The kind's whole-store check before a command's first side effect outside the store."""
    from dunscaith.entrypoints.dunscaith.root.kinds import store

    return store(settings.records.backend).write_check


def doctor_integrity(settings: Settings) -> Callable[[JobStore], str | None]:
    """The kind's whole-store check for doctor."""
    from dunscaith.entrypoints.dunscaith.root.kinds import store

    return store(settings.records.backend).doctor_check


def root_host(root: str) -> HostIdentity | None:
    """The host a record root's HOST file binds it to; None when it has none that reads (or is gone)."""
    from dunscaith.adapters.store.record_root import read_host_file

    try:
        return read_host_file(Path(root))
    except Exception:
        return None


class ClusterSchedulers:
    """A cluster's name -> its scheduler, each opened once for the life of the command (a supervise and
    its sweep share one), and closed with the command (docs/slurm.md: the shared query stops asking)."""

    def __init__(
        self, adapter_of: Callable[[str], str], kinds: Callable[..., AbstractContextManager[Scheduler]]
    ) -> None:
        self._adapter_of = adapter_of  # a cluster's name -> its adapter (BadInput for a cluster not configured)
        self._kinds = kinds  # a cluster's adapter (its kind) -> how to open one of its clusters
        self._opened: dict[str, Scheduler] = {}
        self._stack = ExitStack()

    def __call__(self, cluster: str) -> Scheduler:
        if cluster not in self._opened:
            kind = self._adapter_of(cluster)
            self._opened[cluster] = self._stack.enter_context(self._kinds(kind, cluster=cluster))
        return self._opened[cluster]

    def close(self) -> None:
        self._stack.close()


def _table(settings: Settings, cluster: str) -> ClusterSettings:
    """A cluster's table, for a kind that reads its own keys: the validated model, which a kind's package may
    ask for more than its values; where the settings are the tree read as plain data (settings_view.py)
    it is read from ``load_settings`` itself, validated as on every path."""
    from dunscaith.entrypoints.dunscaith.root.settings_view import Section

    found = settings.cluster(cluster)
    if not isinstance(found, Section):
        return found
    from dunscaith.entrypoints.dunscaith.root.settings import load_settings

    return load_settings().cluster(cluster)


def scheduler_state_root(settings: Settings) -> Path:
    """Where this host's scheduler state lives (each kind's own files: the local scheduler's objects, the
    shared query answers): ``scheduler_state.root``, else records.root, the one a command follows when a
    job's pointer names an earlier root of this host (``edge._follow_root``: records and objects alike)."""
    return settings.scheduler_state.root or settings.records.root


def scheduler_kinds(
    settings: Settings, clock: Clock, crash: CrashPoints
) -> Callable[..., AbstractContextManager[Scheduler]]:
    """A cluster's kind -> how to open one of its clusters (``cluster=``), each by its kind's package
    (entrypoints/dunscaith/root/kinds.py); its table is read only if the kind asks for it."""
    from dunscaith.adapters.scheduler.opening import Opening
    from dunscaith.entrypoints.dunscaith.root import kinds

    def opened(kind: str, *, cluster: str) -> AbstractContextManager[Scheduler]:
        opening = Opening(
            cluster,
            lambda: _table(settings, cluster),
            scheduler_state_root(settings),
            lambda: clock,
            lambda: crash,
            say,
            _terminate_here,
        )
        return kinds.open_scheduler(kind, opening)

    return opened


def schedulers(
    settings: Settings, scheduler_kinds: Callable[..., AbstractContextManager[Scheduler]]
) -> Iterator[Callable[[str], Scheduler]]:
    """A cluster's name -> its scheduler, opened once each for the command and closed with it."""
    opened = ClusterSchedulers(lambda cluster: settings.cluster(cluster).adapter, scheduler_kinds)
    yield opened
    opened.close()  # at the command's end


def _terminate_here(directory: Path, nonce: str | None, grace: float, wait: float) -> TerminateAnswer:
    """``remote terminate``'s use case in this process: a cancel answered without starting a Python of its
    own (which cost the cancel a second or more on a loaded login node)."""
    from dunscaith.adapters.scheduler.local.spawn import TerminateAnswer
    from dunscaith.domain.model.remote.control import ControlError
    from dunscaith.domain.model.remote.errors import RequestNotWritten
    from dunscaith.entrypoints.dunscaith.remote_run import RemoteRoot

    try:  # the process owner's own use case, made by its root
        answer = RemoteRoot().terminate(directory)(grace, wait, nonce)
    except (ControlError, RequestNotWritten) as exc:
        return TerminateAnswer(2, str(exc))
    return TerminateAnswer(answer.exit_code, answer.value)


def probe_kinds(settings: DunscaithSettings, clock: Clock, crash: CrashPoints) -> Callable[..., ClusterProbe]:
    """What `dunscaith check` asks a cluster besides the scheduler port (kind, cluster=), by its kind's package."""
    from dunscaith.adapters.scheduler.opening import Opening
    from dunscaith.entrypoints.dunscaith.root import kinds

    def probe(kind: str, *, cluster: str) -> ClusterProbe:
        opening = Opening(
            cluster,
            lambda: _table(settings, cluster),
            scheduler_state_root(settings),
            lambda: clock,
            lambda: crash,
            say,
        )  # a probe terminates nothing
        return kinds.open_probe(kind, opening)

    return probe


def delivery(settings: Settings) -> CommandEscalationDelivery:
    from dunscaith.adapters.escalation.command import CommandEscalationDelivery

    return CommandEscalationDelivery(settings.escalations.command, settings.escalations.timeout)


def notices(settings: Settings) -> CommandNoticeDelivery:
    """notify.command (docs/notifications.md)."""
    from dunscaith.adapters.escalation.notice_command import CommandNoticeDelivery

    return CommandNoticeDelivery(settings.notify.command, settings.notify.timeout)


def interrupts(settings: Settings) -> SignalInterrupts:
    from dunscaith.adapters.signals.posix import SignalInterrupts

    # TERM always, INT and HUP unless ignored at start; the drain bound, then the signal again (seed 000)
    return SignalInterrupts(always=SignalInterrupts.TERM, drain=settings.supervise.drain)


def progress(*, job: JobId, stream: IO[str] | None = None, follow: bool = False) -> TerminalProgress:
    """The live view of one supervision (job=, stream=, follow=)."""
    from dunscaith.adapters.progress.terminal import TerminalProgress

    return TerminalProgress(job, stream, follow=follow)


def sweep_view(*, sweep: JobId, stream: IO[str] | None = None) -> SweepSupervisionView:
    """The live view of one sweep's supervision (sweep=, stream=)."""
    from dunscaith.adapters.progress.sweep_view import SweepLiveView

    return SweepLiveView(sweep, stream)


def output_files() -> OutputFiles:
    """A job's output files, read for display (logs, --follow)."""
    from dunscaith.adapters.progress.output_files import OutputFiles

    return OutputFiles()


def shown_records_url(url: str) -> str:
    """``records.url`` as ``config show`` prints it: the stores' own rule masks any password in it."""
    from dunscaith.adapters.store.postgres.target import shown_url

    return shown_url(url)


# --- the use cases (built from dunscaith.ports only) ------------------------------------------------------
def delivering(settings: Settings) -> bool:
    return bool(settings.escalations.command)


def store_here(store_exists: bool) -> bool:
    """Whether there is a store to look in (the adapter's answer, asked without making one)."""
    return bool(store_exists)


def recording(kind: str) -> Callable[..., Any]:
    """The builder of ``domain.services.jobs.submit.<kind>``: ``RecordJob``, ``RecordSweep`` (every element
    in one transaction, submit --array/--each) or ``RecordPipeline`` (every job of every step, submit
    --pipeline), each built from the same parts and told what a kind's objects are bound to."""

    def build(**parts: Any) -> Any:
        from dunscaith.domain.services.jobs import submit
        from dunscaith.entrypoints.dunscaith.root.kinds import capabilities

        return getattr(submit, kind)(**parts, capabilities=capabilities)

    return build


RECORDING = ("store", "clock", "crash", "host", "schedulers", "pointers")


def notifier(settings: Settings, notices: NoticeDelivery, clock: Clock, store: JobStore, host: HostInfo) -> Notifier:
    """The notices one supervision owes (notify.command: docs/notifications.md)."""
    return _notifier(settings, notices, clock, store, host.identity().hostname)


def _notifier(settings: Settings, notices: NoticeDelivery, clock: Clock, store: JobStore, here: str) -> Notifier:
    from dunscaith.domain.services.jobs.notify import Notifier

    return Notifier(notices, clock, store, here, first_backoff=settings.supervise.poll)


def supervisor(
    settings: Settings,
    store: JobStore,
    schedulers: Callable[[str], Scheduler],
    clock: Clock,
    crash: CrashPoints,
    delivery: EscalationDelivery,
    residual: ResidualList,
    notifier: Notifier | None = None,
    *,
    cluster: str,
    progress: JobProgress,
) -> Supervisor:
    """The supervisor of one job (cluster=, progress=)."""
    return _supervising(settings, store, schedulers(cluster), clock, crash, delivery, residual)(progress, notifier)


def supervisors(
    settings: Settings,
    store: JobStore,
    schedulers: Callable[[str], Scheduler],
    clock: Clock,
    crash: CrashPoints,
    delivery: EscalationDelivery,
    residual: ResidualList,
    notices: NoticeDelivery,
    host: HostInfo,
    *,
    cluster: str,
) -> Callable[[JobProgress], Supervisor]:
    """The maker of the supervisor of each of many jobs of one cluster (cluster=, and schedulers= as for
    ``supervisor``): what they share made once (the parts, the settings, the policy, this host's name), each
    job's supervisor then made from it with its own progress and notifier. A sweep's elements: the dozen
    parts a ``supervisor`` resolves are resolved once per cluster, not once per element."""
    make = _supervising(settings, store, schedulers(cluster), clock, crash, delivery, residual)
    here = host.identity().hostname
    return lambda progress: make(progress, _notifier(settings, notices, clock, store, here))


def _supervising(
    settings: Settings,
    store: JobStore,
    scheduler: Scheduler,
    clock: Clock,
    crash: CrashPoints,
    delivery: EscalationDelivery,
    residual: ResidualList,
) -> Callable[[JobProgress, Notifier | None], Supervisor]:
    """A job's supervisor on ``scheduler``, from its progress and notifier: what every such one shares made once."""
    from datetime import timedelta

    from dunscaith.domain.model.jobs.policy import Policy
    from dunscaith.domain.model.jobs.residual import ResidualPolicy
    from dunscaith.domain.services.jobs.supervise import SuperviseSettings, Supervisor
    from dunscaith.entrypoints.dunscaith.root.kinds import capabilities

    s = settings.supervise
    supervise = SuperviseSettings(poll=s.poll, poll_max=s.poll_max, giveup=s.giveup, wait=s.wait, drain=s.drain)
    policy = Policy(absence_deadline=timedelta(seconds=s.absence), residual=ResidualPolicy(settings.residual.policy))

    def make(progress: JobProgress, notifier: Notifier | None) -> Supervisor:
        return Supervisor(
            store=store,
            scheduler=scheduler,
            clock=clock,
            crash=crash,
            progress=progress,
            settings=supervise,
            policy=policy,
            delivery=delivery,
            residual=residual,
            capabilities=capabilities,
            notifier=notifier,
        )

    return make


def job_commands(
    store: JobStore, clock: Clock, crash: CrashPoints, settings: DunscaithSettings, **given: Any
) -> JobCommands:
    """The job commands (supervisor=: how to make the supervisor a command acts with under the lock)."""
    from dunscaith.domain.services.jobs.commands import JobCommands

    return JobCommands(store=store, clock=clock, crash=crash, wait=settings.commands.wait, **given)


def sweep_commands(store: JobStore, clock: Clock, settings: DunscaithSettings, **given: Any) -> SweepCommands:
    """The job commands on a sweep or chosen elements (commands=: the job commands acting on one element)."""
    from dunscaith.domain.services.jobs.sweep_commands import SweepCommands

    return SweepCommands(store=store, clock=clock, wait=settings.commands.wait, **given)


def notify_sweep(
    store: JobStore, notices: NoticeDelivery, clock: Clock, crash: CrashPoints, settings: Settings
) -> NotifySweep:
    """A sweep's one notice for its outcome (docs/notifications.md)."""
    from dunscaith.domain.services.jobs.notify_sweep import NotifySweep

    return NotifySweep(
        store=store,
        delivery=notices,
        clock=clock,
        crash=crash,
        wait=settings.supervise.wait,
        first_backoff=settings.supervise.poll,
    )


def sweep_status(store: JobStore) -> SweepStatus:
    """`status NAME` of a sweep and list's one row for it: the elements' summaries, never a fold each."""
    from dunscaith.domain.services.jobs.sweep_status import SweepStatus

    return SweepStatus(store=store)


def prune(
    store: JobStore, residual: ResidualList, pointers: Pointers, clock: Clock, crash: CrashPoints, delivering: bool
) -> Prune:
    from dunscaith.domain.services.jobs.prune import Prune

    return Prune(store=store, residual=residual, pointers=pointers, clock=clock, crash=crash, delivering=delivering)


def sweep(residual: ResidualList, schedulers: Callable[[str], Scheduler], clock: Clock) -> Sweep:
    from dunscaith.domain.services.jobs.sweep import Sweep

    return Sweep(residual=residual, schedulers=schedulers, clock=clock)


def emergency_stop(schedulers: Callable[[str], Scheduler], pointers: Pointers, host: HostInfo) -> EmergencyStop:
    from dunscaith.domain.services.jobs.emergency_stop import EmergencyStop
    from dunscaith.entrypoints.dunscaith.root.kinds import capabilities

    return EmergencyStop(schedulers=schedulers, pointers=pointers, here=host.identity(), capabilities=capabilities)


def check(
    settings: DunscaithSettings,
    schedulers: Callable[[str], Scheduler],
    probe_kinds: Callable[..., ClusterProbe],
    residual: ResidualList,
    clock: Clock,
    *,
    cluster: str,
) -> CheckCluster:
    """`dunscaith check CLUSTER` (cluster=)."""
    import secrets

    from dunscaith.domain.services.jobs.check import CheckCluster

    adapter = settings.cluster(cluster).adapter
    return CheckCluster(
        probe_kinds(adapter, cluster=cluster),
        schedulers(cluster),
        residual,
        clock,
        lambda: secrets.token_hex(8),
        cluster,
        adapter,
    )


def status(
    store: JobStore, clock: Clock, settings: Settings, delivering: bool, schedulers: Callable[[str], Scheduler]
) -> JobStatus:
    from dunscaith.domain.services.jobs.status import JobStatus

    return JobStatus(
        store=store, clock=clock, poll=settings.supervise.poll, delivering=delivering, schedulers=schedulers
    )


def job_events(store: JobStore) -> JobEvents:
    """`dunscaith events JOB`: the record read once, as a timeline."""
    from dunscaith.domain.services.jobs.timeline import JobEvents

    return JobEvents(store=store)


def doctor(
    make_store: Callable[[], JobStore],
    doctor_integrity: Callable[[JobStore], str | None],
    pointers: Pointers,
    residual: ResidualList,
    host: HostInfo,
) -> Doctor:
    """What is wrong with this host's records, reported and never repaired (the store opened inside it)."""
    from dunscaith.domain.services.jobs.doctor import Doctor

    return Doctor(
        open_store=make_store, integrity=doctor_integrity, pointers=pointers, residual=residual, here=host.identity()
    )


def listing(store: JobStore, clock: Clock, settings: Settings, delivering: bool) -> JobListing:
    from dunscaith.domain.services.jobs.listing import JobListing

    return JobListing(store=store, clock=clock, poll=settings.supervise.poll, delivering=delivering)


def pointer_surveys(
    pointers: Pointers, clock: Clock, settings: Settings, host: HostInfo, *, shared: str | None = None
) -> PointerSurveys:
    """Other hosts' jobs and damaged pointers, from the index of pointers not settled (shared=)."""
    from dunscaith.domain.services.jobs.pointer_survey import PointerSurveys

    return PointerSurveys(
        pointers=pointers, clock=clock, poll=settings.supervise.poll, here=host.identity(), shared=shared
    )


def pointer_notes(pointers: Pointers, settings: Settings, **given: Any) -> PointerNotes:
    """The job's pointer kept in step with its record (pointer=, on_problem=)."""
    from dunscaith.domain.services.jobs.pointer_notes import PointerNotes

    return PointerNotes(pointers=pointers, poll=settings.supervise.poll, **given)


def job_outputs(
    output_files: OutputFiles, schedulers: Callable[[str], Scheduler], clock: Clock, settings: Settings
) -> JobOutputs:
    """Where a job's output is, what it says (logs, a failure's last lines) and prune --outputs."""
    from dunscaith.domain.services.jobs.job_output import JobOutputs

    return JobOutputs(
        files=output_files, schedulers=schedulers, clock=clock, state_root=str(scheduler_state_root(settings))
    )


def store_check(store: JobStore, store_integrity: Callable[[JobStore], str | None]) -> StoreCheck:
    """The store opened and checked before a command acts (a store that cannot be opened raises here)."""
    from dunscaith.domain.services.jobs.store_check import StoreCheck

    return StoreCheck(store=store, integrity=store_integrity)


def watch_job(
    store: JobStore, make_progress: Callable[..., SupervisionView], settings: DunscaithSettings, delivering: bool
) -> WatchJob:
    """The live view of a job supervised elsewhere, from its record (``watch``): reads only. It looks at the
    job's lock every supervise.poll, at most 2 s, so a supervisor's end shows soon even when the poll is long."""
    from dunscaith.domain.services.jobs.watch import WatchJob

    return WatchJob(store=store, views=make_progress, interval=min(settings.supervise.poll, 2.0), delivering=delivering)


def shared_location(settings: Settings, make_store: Callable[[], JobStore]) -> Callable[[], str | None]:
    """Where the records are when the store is one every login node shares (bound to no host), else None;
    a host's own store is never opened just to answer (a pointer to another host then opens nothing here)."""
    from dunscaith.entrypoints.dunscaith.root.kinds import records_shared

    def where() -> str | None:
        if not records_shared(settings.records.backend):
            return None
        opened = make_store()
        identity = opened.identity()
        return opened.location() if identity.host is None and identity.backend != "memory" else None

    return where


def owning_host(
    pointers: Pointers,
    host: HostInfo,
    shared_location: Callable[[], str | None],
    root_host: Callable[[str], HostIdentity | None],
) -> OwningHost:
    """Here, or the host that owns a job (its pointer, or its record's binding)."""
    from dunscaith.domain.services.jobs.owning_host import OwningHost
    from dunscaith.entrypoints.dunscaith.root.kinds import capabilities

    return OwningHost(
        pointers=pointers,
        here=host.identity(),
        shared_location=shared_location,
        root_host=root_host,
        capabilities=capabilities,
    )


def supervise_job(
    store: JobStore,
    pointers: Pointers,
    owning_host: OwningHost,
    host: HostInfo,
    make_supervisor: Callable[..., Supervisor],
    make_progress: Callable[..., SupervisionView],
    sweep: Sweep,
    job_outputs: JobOutputs,
    settings: Settings,
    **given: Any,
) -> SuperviseJob:
    """One supervision from the command line (on_problem=, on_sweep=: how the command shows them)."""
    from dunscaith.domain.services.jobs.supervise_job import SuperviseJob
    from dunscaith.entrypoints.dunscaith.install import own_binary

    return SuperviseJob(
        store=store,
        pointers=pointers,
        owning=owning_host,
        here=host.identity(),
        binary=own_binary(),
        supervisor=make_supervisor,
        views=make_progress,
        sweep=sweep,
        outputs=job_outputs,
        poll=settings.supervise.poll,
        **given,
    )


def supervise_sweep(
    store: JobStore,
    make_supervisor: Callable[..., Supervisor],
    make_supervisors: Callable[..., Callable[[JobProgress], Supervisor]],
    make_sweep_view: Callable[..., SweepSupervisionView],
    schedulers: Callable[[str], Scheduler],
    clock: Clock,
    crash: CrashPoints,
    **given: Any,
) -> SuperviseSweep:
    """One supervision of a sweep's elements (one=: the supervise_job above, with the command's on_problem)."""
    from dunscaith.domain.services.jobs.supervise_sweep import SuperviseSweep

    return SuperviseSweep(
        store=store,
        supervisor=make_supervisor,
        supervisors=make_supervisors,
        views=make_sweep_view,
        schedulers=schedulers,
        clock=clock,
        crash=crash,
        **given,
    )


# --- the one declaration ----------------------------------------------------------------------------------
# Every technology the job commands use (a test overrides this set as a whole: tests/fakes/dunscaith_adapters.py)
ADAPTERS: dict[str, Part] = {
    "clock": Part(clock, scope="singleton"),
    "host": Part(host, scope="singleton"),
    "crash": Part(crash, scope="singleton"),
    "pointers": Part(pointers, ("crash",), "singleton"),
    "store_opening": Part(store_opening, ("settings", "host", "pointers")),
    "store": Part(store, ("settings", "store_opening"), "resource"),
    "store_exists": Part(store_exists, ("settings", "store_opening")),
    "scheduler_kinds": Part(scheduler_kinds, ("settings", "clock", "crash")),
    "schedulers": Part(schedulers, ("settings", "scheduler_kinds"), "resource"),
    "root_host": Part(root_host, scope="object"),
    "probe_kinds": Part(probe_kinds, ("settings", "clock", "crash")),
    "store_integrity": Part(store_integrity, ("settings",)),
    "doctor_integrity": Part(doctor_integrity, ("settings",)),
    "residual": Part(residual, scope="singleton"),
    "delivery": Part(delivery, ("settings",), "singleton"),
    "notices": Part(notices, ("settings",), "singleton"),
    "interrupts": Part(interrupts, ("settings",), "singleton"),
    "progress": Part(progress),
    "sweep_view": Part(sweep_view),
    "output_files": Part(output_files, scope="singleton"),
}
# Every use case of the job commands, built from the adapters' ports
USE_CASES: dict[str, Part] = {
    "delivering": Part(delivering, ("settings",)),
    # whether there is a store to look in, asked without making one (the adapter of the same name)
    "store_exists": Part(store_here, ("store_exists",)),
    "record_job": Part(recording("RecordJob"), RECORDING),
    "record_sweep": Part(recording("RecordSweep"), RECORDING),
    "record_pipeline": Part(recording("RecordPipeline"), RECORDING),
    "notifier": Part(notifier, ("settings", "notices", "clock", "store", "host")),
    "supervisor": Part(
        supervisor, ("settings", "store", "schedulers", "clock", "crash", "delivery", "residual", "notifier")
    ),
    "supervisors": Part(
        supervisors, ("settings", "store", "schedulers", "clock", "crash", "delivery", "residual", "notices", "host")
    ),
    "notify_sweep": Part(notify_sweep, ("store", "notices", "clock", "crash", "settings")),
    "job_commands": Part(job_commands, ("store", "clock", "crash", "settings")),
    "sweep_commands": Part(sweep_commands, ("store", "clock", "settings")),
    "sweep_status": Part(sweep_status, ("store",)),
    "prune": Part(prune, ("store", "residual", "pointers", "clock", "crash", "delivering")),
    "sweep": Part(sweep, ("residual", "schedulers", "clock")),
    "emergency_stop": Part(emergency_stop, ("schedulers", "pointers", "host")),
    "check": Part(check, ("settings", "schedulers", "probe_kinds", "residual", "clock")),
    "status": Part(status, ("store", "clock", "settings", "delivering", "schedulers")),
    "job_events": Part(job_events, ("store",)),
    "doctor": Part(doctor, ("@store", "doctor_integrity", "pointers", "residual", "host")),
    "listing": Part(listing, ("store", "clock", "settings", "delivering")),
    "pointer_surveys": Part(pointer_surveys, ("pointers", "clock", "settings", "host")),
    "pointer_notes": Part(pointer_notes, ("pointers", "settings")),
    "job_outputs": Part(job_outputs, ("output_files", "schedulers", "clock", "settings")),
    "store_check": Part(store_check, ("store", "store_integrity")),
    "watch_job": Part(watch_job, ("store", "@progress", "settings", "delivering")),
    "shared_location": Part(shared_location, ("settings", "@store")),
    "owning_host": Part(owning_host, ("pointers", "host", "shared_location", "root_host")),
    "supervise_job": Part(
        supervise_job,
        ("store", "pointers", "owning_host", "host", "@supervisor", "@progress", "sweep", "job_outputs", "settings"),
    ),
    "supervise_sweep": Part(
        supervise_sweep, ("store", "@supervisor", "@supervisors", "@sweep_view", "schedulers", "clock", "crash")
    ),
}


# --- what a command sees of them (both resolvers: wiring.Root's makers, the container's providers) ----------
class AdapterMakers(Protocol):
    """The adapter a command reaches itself (the drain's signals)."""

    def interrupts(self) -> SignalInterrupts: ...


class ReadUseCases(Protocol):
    """The use cases that read: the records, the pointers, a job's output, the store's checks."""

    def store_exists(self) -> bool: ...

    def status(self) -> JobStatus: ...

    def listing(self) -> JobListing: ...

    def sweep_status(self) -> SweepStatus: ...

    def job_events(self) -> JobEvents: ...

    def pointer_surveys(self, *, shared: str | None = None) -> PointerSurveys: ...

    def job_outputs(self) -> JobOutputs: ...

    def store_check(self) -> StoreCheck: ...

    def watch_job(self) -> WatchJob: ...

    def shared_location(self) -> Callable[[], str | None]: ...

    def owning_host(self) -> OwningHost: ...

    def doctor(self) -> Doctor: ...

    def check(self, *, cluster: str) -> CheckCluster: ...


class ActingUseCases(Protocol):
    """The use cases that act: record, supervise, the job commands, prune, the sweeps, stop."""

    def record_job(self) -> RecordJob: ...

    def record_sweep(self) -> RecordSweep: ...

    def record_pipeline(self) -> RecordPipeline: ...

    def supervisor(self, *, cluster: str, progress: JobProgress) -> Supervisor: ...

    def supervisors(self, *, cluster: str, **given: Any) -> Callable[[JobProgress], Supervisor]: ...

    def job_commands(self, **given: Any) -> JobCommands: ...

    def sweep_commands(self, **given: Any) -> SweepCommands: ...

    def prune(self) -> Prune: ...

    def sweep(self) -> Sweep: ...

    def emergency_stop(self) -> EmergencyStop: ...

    def pointer_notes(self, **given: Any) -> PointerNotes: ...

    def supervise_job(self, **given: Any) -> SuperviseJob: ...

    def supervise_sweep(self, **given: Any) -> SuperviseSweep: ...

    def notify_sweep(self) -> NotifySweep: ...


class UseCaseMakers(ReadUseCases, ActingUseCases, Protocol):
    """Each use case, made when asked for (``USE_CASES``' parts, with what the caller gives)."""


# --- the lean resolver ------------------------------------------------------------------------------------
class Makers:
    """One container's parts as functions that make them (``root.use_cases.status()``), as the
    dependency-injector container's providers are called."""

    def __init__(self, root: Root, space: dict[str, Part]) -> None:
        self._root = root
        self._space = space

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in self._space:
            raise AttributeError(name)
        root, space = self._root, self._space
        return lambda **given: root.make(space, name, **given)


class Root:
    """``ADAPTERS`` and ``USE_CASES`` resolved by hand: each part made when first asked for, a singleton or a
    resource once per command, resources closed by ``shutdown_resources``. A use case's need is a use case
    of that name (but itself), else an adapter, as in the container. ``settings``: the validated tree, or a
    function that validates it (called when a part first needs it)."""

    def __init__(self, settings: Settings | Callable[[], Settings]) -> None:
        self._settings = settings
        self._made: dict[tuple[int, str], Any] = {}
        self._closing = ExitStack()
        self.adapters = Makers(self, ADAPTERS)
        self.use_cases = Makers(self, USE_CASES)

    def settings(self) -> Any:
        if callable(self._settings):
            self._settings = self._settings()
        return self._settings

    def use_settings(self, settings: Settings) -> None:
        """The command uses ``settings`` from now on (a pointer naming another record root:
        edge._follow_root): every part is made again from them when next asked for."""
        self._settings = settings
        self._made.clear()

    def make(self, space: dict[str, Part], name: str, **given: Any) -> Any:
        key = (id(space), name)
        if key in self._made:
            return self._made[key]
        part = space[name]
        if part.scope == "object":
            return part.build
        # what the caller gives overrides what is injected, as a dependency-injector provider's call does
        injected = {param(need): self._input(space, name, need) for need in part.needs if param(need) not in given}
        made = part.build(**injected, **given)
        if part.scope == "resource":
            made = self._closing.enter_context(_Entered(made))
        if part.scope in ("singleton", "resource"):
            self._made[key] = made
        return made

    def _input(self, space: dict[str, Part], asking: str, need: str) -> Any:
        if need == "settings":
            return self.settings()
        name = need.lstrip("@")
        where = space if name in space and name != asking else ADAPTERS
        if need.startswith("@"):
            return lambda **given: self.make(where, name, **given)
        return self.make(where, name)

    def shutdown_resources(self) -> None:
        self._closing.close()


class _Entered(AbstractContextManager[Any]):  # a generator's one value, closed as a resource
    def __init__(self, made: Iterator[Any]) -> None:
        self._made = made

    def __enter__(self) -> Any:
        return next(self._made)

    def __exit__(self, *exc: object) -> None:
        next(self._made, None)
