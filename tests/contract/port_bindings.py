"""Every adapter, real and fake, bound to the port it implements, so that mypy checks each one against it.

Nothing calls these functions: they exist for the type checker. The composition roots hand adapters to the
use cases through dependency-injector providers, which mypy cannot see through, so without this module an
adapter could drift from its port (a method the port declares and no adapter has, a changed signature)
with mypy green. A binding per port checks what the use cases receive; the objects an adapter's methods
return (a store's lock and append watch, a transport's channel, a record's appender) are checked through
the return types of those methods.

A new adapter gets a line here; a test's own fake is checked where the test hands it to a use case.
"""

from __future__ import annotations

from dunscaith.adapters.circuits.qiskit_aqt import QiskitAqtTranslator
from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.crash_points.env import EnvCrashPoints
from dunscaith.adapters.escalation.command import CommandEscalationDelivery
from dunscaith.adapters.host.fake import FakeHost
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.pointers.files import FilePointers
from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles
from dunscaith.adapters.progress.terminal import TerminalProgress
from dunscaith.adapters.residual.files import FileResidualList
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.rules.python_file import NoUserRules, PythonRulesFile
from dunscaith.adapters.run_records.jsonl import JsonlRecordStore
from dunscaith.adapters.scheduler.fake import FakeArrayScheduler, FakeScheduler
from dunscaith.adapters.scheduler.gridengine.probe import GridEngineProbe
from dunscaith.adapters.scheduler.gridengine.scheduler import GridEngineScheduler
from dunscaith.adapters.scheduler.local.probe import LocalProbe
from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.adapters.scheduler.shared_query import SharedArrayQueryScheduler, SharedQueryScheduler
from dunscaith.adapters.scheduler.slurm.probe import SlurmProbe
from dunscaith.adapters.scheduler.slurm.scheduler import SlurmCliScheduler
from dunscaith.adapters.signals.posix import SignalInterrupts
from dunscaith.adapters.site_lock.flock import FlockSiteLock
from dunscaith.adapters.sites.fake import FakeSite
from dunscaith.adapters.sites.mqss import MqssSite
from dunscaith.adapters.sites.piastq import PiastqSite
from dunscaith.adapters.sites.vlq import VlqSite
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.adapters.transport.caller_streams import StdioStreams
from dunscaith.adapters.transport.local import LocalTransport
from dunscaith.adapters.transport.openssh import OpenSshTransport
from dunscaith.adapters.transport.paramiko_ssh import ParamikoTransport
from dunscaith.adapters.transport.sent_requests import FileSentRequests
from dunscaith.domain.services.jobs.pointer_notes import Fanout, PointerNotes
from dunscaith.domain.services.jobs.round_query import RoundQuery
from dunscaith.ports.circuit_translator import CircuitTranslator
from dunscaith.ports.clock import Clock
from dunscaith.ports.cluster_probe import ClusterProbe
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.escalation_delivery import EscalationDelivery
from dunscaith.ports.forwarding import CallerStreams, SentRequests
from dunscaith.ports.host import HostInfo
from dunscaith.ports.instance_files import InstanceFiles
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_progress import JobProgress
from dunscaith.ports.job_store import JobStore
from dunscaith.ports.pointers import Pointers
from dunscaith.ports.residual import ResidualList
from dunscaith.ports.run_io import UserRules
from dunscaith.ports.run_record import RunRecords
from dunscaith.ports.scheduler import CreatesArrays, Scheduler, WatchesChanges
from dunscaith.ports.site import Site
from dunscaith.ports.site_lock import SiteLock
from dunscaith.ports.transport import Transport
from tests.fakes.dunscaith_adapters import NoSignals
from tests.fixtures.pbs.scheduler import PbsScheduler


def job_stores(sqlite: SqliteStore, postgres: PostgresStore, memory: InMemoryStore) -> None:
    bound: list[JobStore] = [sqlite, postgres, memory]
    del bound


def schedulers(slurm: SlurmCliScheduler, local: LocalScheduler, shared: SharedQueryScheduler,
               fake: FakeScheduler, pbs: PbsScheduler) -> None:
    bound: list[Scheduler] = [slurm, local, shared, fake, pbs]
    watching: list[WatchesChanges] = [local]  # the schedulers that tell of their objects' changes
    del bound, watching


def array_schedulers(fake: FakeArrayScheduler, rounds: RoundQuery) -> None:
    arrays: list[CreatesArrays] = [fake]  # the schedulers that make a sweep's objects in one request
    bound: list[Scheduler] = [fake, rounds]
    watching: list[WatchesChanges] = [rounds]  # a sweep's round query passes its scheduler's watch on
    del arrays, bound, watching


def cluster_probes(slurm: SlurmProbe, local: LocalProbe) -> None:
    bound: list[ClusterProbe] = [slurm, local]
    del bound


def pointers(files: FilePointers, memory: InMemoryPointers) -> None:
    bound: list[Pointers] = [files, memory]
    del bound


def residual_lists(files: FileResidualList, memory: InMemoryResidualList) -> None:
    bound: list[ResidualList] = [files, memory]
    del bound


def clocks(system: SystemClock, fake: FakeClock) -> None:
    bound: list[Clock] = [system, fake]
    del bound


def hosts(system: SystemHost, fake: FakeHost) -> None:
    bound: list[HostInfo] = [system, fake]
    del bound


def interrupts(posix: SignalInterrupts, none: NoSignals) -> None:
    bound: list[Interrupts] = [posix, none]
    del bound


def job_progress(terminal: TerminalProgress, notes: PointerNotes, fanout: Fanout) -> None:
    bound: list[JobProgress] = [terminal, notes, fanout]
    del bound


def crash_points(env: EnvCrashPoints) -> CrashPoints:
    return env


def escalation_delivery(command: CommandEscalationDelivery) -> EscalationDelivery:
    return command


def instance_files(directory: DirectoryInstanceFiles) -> InstanceFiles:
    return directory


def user_rules(none: NoUserRules, python_file: PythonRulesFile) -> None:
    bound: list[UserRules] = [none, python_file]
    del bound


def run_records(jsonl: JsonlRecordStore) -> RunRecords:
    return jsonl


def site_locks(flock: FlockSiteLock) -> SiteLock:
    return flock


def sites(mqss: MqssSite, piastq: PiastqSite, vlq: VlqSite, fake: FakeSite) -> None:
    bound: list[Site] = [mqss, piastq, vlq, fake]
    del bound


def transports(openssh: OpenSshTransport, paramiko: ParamikoTransport, local: LocalTransport) -> None:
    bound: list[Transport] = [openssh, paramiko, local]
    del bound


def forwarding(sent: FileSentRequests, streams: StdioStreams) -> tuple[SentRequests, CallerStreams]:
    return sent, streams



def circuit_translators(qiskit: QiskitAqtTranslator) -> CircuitTranslator:
    return qiskit


def slurm_array_schedulers(slurm: SlurmCliScheduler, shared: SharedArrayQueryScheduler) -> None:
    bound: list[CreatesArrays] = [slurm, shared]  # the schedulers that make a sweep's objects as one array
    also_schedulers: list[Scheduler] = [shared]
    del bound, also_schedulers


def kinds() -> None:
    """Each kind module against the protocol the registry reads it by (entrypoints/dunscaith/root/kinds.py)."""
    from dunscaith.adapters.scheduler.gridengine import kind as gridengine
    from dunscaith.adapters.scheduler.local import kind as local
    from dunscaith.adapters.scheduler.opening import SchedulerKind
    from dunscaith.adapters.scheduler.slurm import kind as slurm
    from dunscaith.adapters.store.opening import StoreKind
    from dunscaith.adapters.store.postgres import kind as postgres
    from dunscaith.adapters.store.sqlite import kind as sqlite
    from tests.fixtures.pbs import kind as pbs
    from tests.fixtures.scratch import kind as scratch

    scheduler_kinds: list[SchedulerKind] = [local, slurm, gridengine, pbs]
    store_kinds: list[StoreKind] = [sqlite, postgres, scratch]
    assert scheduler_kinds and store_kinds


def gridengine_bindings(scheduler: GridEngineScheduler, probe: GridEngineProbe) -> None:
    """Grid Engine: the scheduler port, arrays for sweeps, and the cluster probe."""
    as_scheduler: Scheduler = scheduler
    as_arrays: CreatesArrays = scheduler
    as_probe: ClusterProbe = probe
    del as_scheduler, as_arrays, as_probe
