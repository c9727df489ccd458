"""The plain composition root of a plain ``status``/``list`` (the front door's read path), and the builders
of the job adapters it shares with the job container.

``dunscaith status JOB`` and ``dunscaith list`` are the commands a user waits on most. Their plain lines
are served from the front door (``reads.py``) without typer, pydantic or dependency-injector: measured on
this 2-core host, importing dependency-injector alone costs ~55 ms (asyncio, and pydantic-settings when it
is installed), pydantic-settings ~100 ms more, and typer with its pydantic adapters ~90 ms, against a
goal of 2.5x ``python -c 'import typer'`` (~140 ms) for the whole command. So this root is built by hand,
as ``remote_run.py``'s and ``forwarding_root.py``'s are, and it builds what ``container.py`` builds for
those commands, from the same builders (defined here, and used there): the SQLite store (the only backend
this path takes: ``reads.py`` hands any other to the typer app), the pointers, the residual list, the
clock, the host, the crash points, a cluster's scheduler (opened by its kind's package, kinds.py, when
first asked for), and the use cases
status and list ask ``edge.use_cases`` for. Each is made when first asked for, once; the store and the
opened schedulers are closed by ``shutdown_resources``, as the container's resources are.

The settings are the ones ``settings_cache.read_settings`` remembers of ``load_settings``' answer (each
cluster's kind); a kind that reads its own table (Slurm's) is handed it from ``load_settings`` itself,
which validates it as on every other path.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack, closing
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from dunscaith.adapters.crash_points.env import EnvCrashPoints
    from dunscaith.adapters.host.system import SystemHost
    from dunscaith.adapters.kind_settings import ClusterSettings
    from dunscaith.adapters.pointers.files import FilePointers
    from dunscaith.adapters.residual.files import FileResidualList
    from dunscaith.adapters.scheduler.local.spawn import TerminateAnswer
    from dunscaith.adapters.store.opening import OpenedStore, StoreOpening
    from dunscaith.domain.model.jobs.record import HostIdentity
    from dunscaith.domain.services.jobs.listing import JobListing
    from dunscaith.domain.services.jobs.owning_host import OwningHost
    from dunscaith.domain.services.jobs.pointer_survey import PointerSurveys
    from dunscaith.domain.services.jobs.status import JobStatus
    from dunscaith.domain.services.jobs.store_check import StoreCheck
    from dunscaith.domain.services.jobs.sweep import Sweep
    from dunscaith.domain.services.jobs.sweep_status import SweepStatus
    from dunscaith.entrypoints.dunscaith.settings_cache import ReadSettings
    from dunscaith.ports.clock import Clock
    from dunscaith.ports.crash_points import CrashPoints
    from dunscaith.ports.host import HostInfo
    from dunscaith.ports.job_store import JobStore
    from dunscaith.ports.pointers import Pointers
    from dunscaith.ports.scheduler import Scheduler

# A test seam for "the root is on NFS": a mountinfo file to read instead of the kernel's.
MOUNTINFO_VARIABLE = "DUNSCAITH_TEST_MOUNTINFO"

T = TypeVar("T")


# --- the builders both roots use (container.py names each in a provider) --------------------------------
def host() -> SystemHost:
    from dunscaith.adapters.host.system import SystemHost

    mountinfo = os.environ.get(MOUNTINFO_VARIABLE)
    return SystemHost(mountinfo=Path(mountinfo)) if mountinfo else SystemHost()


def clock() -> Clock:
    from dunscaith.adapters.clock.system import SystemClock

    return SystemClock()


def crash_points() -> EnvCrashPoints:
    from dunscaith.adapters.crash_points.env import EnvCrashPoints

    return EnvCrashPoints()


def pointers(crash: CrashPoints) -> FilePointers:
    from dunscaith.adapters.pointers.files import FilePointers, default_pointer_dir

    # the index's steps join the crash-point sweep: "pointer-indexed", "pointer-settled"
    return FilePointers(default_pointer_dir(), checkpoint=crash.reached)


def residual() -> FileResidualList:
    from dunscaith.adapters.residual.files import FileResidualList, default_residual_dir

    return FileResidualList(default_residual_dir())


def store_opening(root: Path, host: HostInfo, pointers: Pointers | None = None,
                  records: Callable[[], Any] | None = None) -> StoreOpening:
    """What a store kind is opened with: records.root, this host, its pointers, and the [records] table
    (read only by a kind that needs more than the root: a server's URL)."""
    from dunscaith.adapters.store.opening import StoreOpening
    from dunscaith.domain.services.jobs.store_creation import StoreCreation

    def no_table() -> Any:
        raise AssertionError("this store was opened without the [records] table")

    def recorded_in(location: str) -> Sequence[str]:
        assert pointers is not None, "this store was opened without the pointers"
        return StoreCreation(pointers, host.identity()).named_by_pointers(location)

    return StoreOpening(root, lambda: host, recorded_in, records or no_table)


def open_store(backend: str, opening: StoreOpening) -> OpenedStore:
    """The store ``records.backend`` names, by its kind's package (kinds.py)."""
    from dunscaith.entrypoints.dunscaith.kinds import store

    opened = store(backend).open_store(opening)
    if opened.read_unlocked is not None:  # a full or read-only root still reads (docs/record-backing.md)
        say(f"read without a lock: the record root is {opened.read_unlocked}; what is shown may be a moment old, "
            "and nothing can be recorded there now")
    return opened


def store_exists(backend: str, opening: StoreOpening) -> bool:
    from dunscaith.entrypoints.dunscaith.kinds import store

    return store(backend).store_exists(opening)


def write_check(backend: str) -> Callable[[JobStore], str | None]:
    """The kind's whole-store check before a command's first side effect outside the store."""
    from dunscaith.entrypoints.dunscaith.kinds import store

    return store(backend).write_check


def doctor_check(backend: str) -> Callable[[JobStore], str | None]:
    """The kind's whole-store check for doctor."""
    from dunscaith.entrypoints.dunscaith.kinds import store

    return store(backend).doctor_check


# this root's one store (reads.py and submits.py hand any other records.backend to the app)
def sqlite_store(root: Path, host: HostInfo, pointers: Pointers) -> OpenedStore:
    return open_store("sqlite", store_opening(root, host, pointers))


def sqlite_store_exists(root: Path, host: HostInfo) -> bool:
    """Whether records.root holds a SQLite store to look in, asked without making anything
    (adapters/store/sqlite/kind.py)."""
    return store_exists("sqlite", store_opening(root, host))


def sqlite_check(store: JobStore) -> str | None:
    """SQLite's page check (registered for records.backend = "sqlite", whose store this is)."""
    return write_check("sqlite")(store)


def root_host(root: str) -> HostIdentity | None:
    """The host a record root's HOST file binds it to; None when it has none that reads (or is gone)."""
    from dunscaith.adapters.store.record_root import read_host_file

    try:
        return read_host_file(Path(root))
    except Exception:
        return None


def shared_location(backend: str, store: Callable[[], JobStore]) -> Callable[[], str | None]:
    """Where the records are when the store is one every login node shares (bound to no host), else None;
    a host's own store is never opened just to answer (a pointer to another host then opens nothing here)."""
    from dunscaith.entrypoints.dunscaith.kinds import records_shared

    def where() -> str | None:
        if not records_shared(backend):
            return None
        opened = store()
        identity = opened.identity()
        return opened.location() if identity.host is None and identity.backend != "memory" else None

    return where


class ClusterSchedulers:
    """A cluster's name -> its scheduler, each opened once for the life of the command (a supervise and
    its sweep share one), and closed with the command (docs/slurm.md: the shared query stops asking)."""

    def __init__(self, adapter_of: Callable[[str], str],
                 kinds: Callable[..., AbstractContextManager[Scheduler]]) -> None:
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


def scheduler_kinds(records_root: Path, table: Callable[[str], ClusterSettings], clock: Callable[[], Clock],
                    crash: Callable[[], CrashPoints]) -> Callable[..., AbstractContextManager[Scheduler]]:
    """A cluster's kind -> how to open one of its clusters (``cluster=``), each by its kind's package
    (entrypoints/dunscaith/kinds.py); ``table``: a cluster's table, read only if the kind asks for it."""
    from dunscaith.adapters.scheduler.opening import Opening
    from dunscaith.entrypoints.dunscaith import kinds

    def opened(kind: str, *, cluster: str) -> AbstractContextManager[Scheduler]:
        opening = Opening(cluster, lambda: table(cluster), records_root, clock, crash, say, _terminate_here)
        return kinds.open_scheduler(kind, opening)

    return opened


def _terminate_here(directory: Path, nonce: str | None, grace: float, wait: float) -> TerminateAnswer:
    """``remote terminate``'s use case in this process: a cancel answered without starting a Python of its
    own (which cost the cancel a second or more on a loaded login node)."""
    from dunscaith.adapters.clock.system import SystemClock
    from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles
    from dunscaith.adapters.scheduler.local.spawn import TerminateAnswer
    from dunscaith.domain.model.remote.control import ControlError
    from dunscaith.domain.model.remote.errors import RequestNotWritten
    from dunscaith.domain.services.remote.instances import TerminateInstance

    try:
        answer = TerminateInstance(DirectoryInstanceFiles(directory), SystemClock())(grace, wait, nonce)
    except (ControlError, RequestNotWritten) as exc:
        return TerminateAnswer(2, str(exc))
    return TerminateAnswer(answer.exit_code, answer.value)


def say(line: str) -> None:
    """A scheduler's word while a call waits (docs/slurm.md): on stderr, where notices go (json.md too)."""
    print(f"dunscaith: {line}", file=sys.stderr, flush=True)


# --- the read path's root ---------------------------------------------------------------------------------
def _table(cluster: str) -> ClusterSettings:
    """A cluster's table, for a kind that reads its own keys: from ``load_settings`` itself, which validates
    it as on every other path (the remembered answer holds only each cluster's kind)."""
    from dunscaith.entrypoints.dunscaith.settings import load_settings

    return load_settings().cluster(cluster)


def _adapter_of(settings: ReadSettings, cluster: str) -> str:
    """A cluster's adapter (its kind), from the remembered settings; a cluster not configured: the settings'
    own refusal, word for word."""
    known = dict(settings.clusters)
    if cluster in known:
        return known[cluster]
    from dunscaith.entrypoints.dunscaith.settings import load_settings

    return load_settings().cluster(cluster).adapter


class _Provided:
    """What ``edge.container_of(ctx).use_cases.container`` is to the commands: here, the read root itself."""

    def __init__(self, container: ReadRoot) -> None:
        self.container = container


class ReadRoot:
    """status's and list's use cases over the SQLite store, wired as ``container.Container`` wires them.

    ``edge`` reaches it as it reaches the container (``ctx.obj``: ``use_cases.container.status()`` ...,
    ``settings()``); ``shutdown_resources`` closes the store and the opened schedulers."""

    def __init__(self, settings: ReadSettings) -> None:
        self._settings = settings
        self._made: dict[str, Any] = {}
        self._closing = ExitStack()
        self.use_cases = _Provided(self)
        self.adapters = _Provided(self)

    def _once(self, name: str, make: Callable[[], T]) -> T:
        if name not in self._made:
            self._made[name] = make()
        return cast(T, self._made[name])

    # --- the adapters
    def settings(self) -> ReadSettings:
        return self._settings

    def clock(self) -> Clock:
        return self._once("clock", clock)

    def host(self) -> SystemHost:
        return self._once("host", host)

    def crash(self) -> EnvCrashPoints:
        return self._once("crash", crash_points)

    def pointers(self) -> FilePointers:
        return self._once("pointers", lambda: pointers(self.crash()))

    def residual(self) -> FileResidualList:
        return self._once("residual", residual)

    def store(self) -> JobStore:
        return self._once("store", lambda: self._closing.enter_context(
            closing(sqlite_store(self._settings.root, self.host(), self.pointers()))))

    def store_exists(self) -> bool:
        return sqlite_store_exists(self._settings.root, self.host())  # the only backend this path takes

    def schedulers(self) -> Callable[[str], Scheduler]:
        def opened() -> ClusterSchedulers:
            made = ClusterSchedulers(partial(_adapter_of, self._settings),
                                     scheduler_kinds(self._settings.root, _table, self.clock, self.crash))
            self._closing.callback(made.close)
            return made

        return self._once("schedulers", opened)

    # --- the use cases (container.UseCases' providers of the same names)
    def status(self) -> JobStatus:
        from dunscaith.domain.services.jobs.status import JobStatus

        return JobStatus(store=self.store(), clock=self.clock(), poll=self._settings.poll,
                         delivering=self._settings.delivering, schedulers=self.schedulers())

    def listing(self) -> JobListing:
        from dunscaith.domain.services.jobs.listing import JobListing

        return JobListing(store=self.store(), clock=self.clock(), poll=self._settings.poll,
                          delivering=self._settings.delivering)

    def store_check(self) -> StoreCheck:
        from dunscaith.domain.services.jobs.store_check import StoreCheck

        return StoreCheck(store=self.store(), integrity=sqlite_check)

    def sweep_status(self) -> SweepStatus:
        from dunscaith.domain.services.jobs.sweep_status import SweepStatus

        return SweepStatus(store=self.store())

    def sweep(self) -> Sweep:
        from dunscaith.domain.services.jobs.sweep import Sweep

        return Sweep(residual=self.residual(), schedulers=self.schedulers(), clock=self.clock())

    def pointer_surveys(self, shared: str | None = None) -> PointerSurveys:
        from dunscaith.domain.services.jobs.pointer_survey import PointerSurveys

        return PointerSurveys(pointers=self.pointers(), clock=self.clock(), poll=self._settings.poll,
                              here=self.host().identity(), shared=shared)

    def shared_location(self) -> Callable[[], str | None]:
        return shared_location(self._settings.routing.backend, self.store)

    def owning_host(self) -> OwningHost:
        from dunscaith.domain.services.jobs.owning_host import OwningHost
        from dunscaith.entrypoints.dunscaith.kinds import capabilities

        return OwningHost(pointers=self.pointers(), here=self.host().identity(),
                          shared_location=self.shared_location(), root_host=root_host, capabilities=capabilities)

    def shutdown_resources(self) -> None:
        self._closing.close()
