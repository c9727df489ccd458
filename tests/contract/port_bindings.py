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

from adapters.clock.fake import FakeClock
from adapters.clock.system import SystemClock
from adapters.host.fake import FakeHost
from adapters.host.system import SystemHost
from adapters.pointers.files import FilePointers
from adapters.pointers.memory import InMemoryPointers
from adapters.process.crash_points import EnvCrashPoints
from adapters.process.escalation_command import CommandEscalationDelivery
from adapters.process.instance_dir import DirectoryInstanceFiles
from adapters.progress.terminal import TerminalProgress
from adapters.residual.files import FileResidualList
from adapters.residual.memory import InMemoryResidualList
from adapters.rules.python_file import NoUserRules, PythonRulesFile
from adapters.run_records.jsonl import JsonlRecordStore
from adapters.scheduler.fake import FakeScheduler
from adapters.scheduler.local.scheduler import LocalScheduler
from adapters.scheduler.shared_query import SharedQueryScheduler
from adapters.scheduler.slurm.scheduler import SlurmCliScheduler
from adapters.signals.posix import SignalInterrupts
from adapters.site_lock.flock import FlockSiteLock
from adapters.sites.fake import FakeSite
from adapters.sites.mqss import MqssSite
from adapters.sites.piastq import PiastqSite
from adapters.sites.vlq import VlqSite
from adapters.store.memory import InMemoryStore
from adapters.store.postgres.store import PostgresStore
from adapters.store.sqlite.store import SqliteStore
from adapters.transport.caller_streams import StdioStreams
from adapters.transport.local import LocalTransport
from adapters.transport.openssh import OpenSshTransport
from adapters.transport.paramiko_ssh import ParamikoTransport
from adapters.transport.sent_requests import FileSentRequests
from domain.services.jobs.pointer_notes import Fanout, PointerNotes
from ports.clock import Clock
from ports.crash_points import CrashPoints
from ports.escalation_delivery import EscalationDelivery
from ports.forwarding import CallerStreams, SentRequests
from ports.host import HostInfo
from ports.instance_files import InstanceFiles
from ports.interrupts import Interrupts
from ports.job_progress import JobProgress
from ports.job_store import JobStore
from ports.pointers import Pointers
from ports.residual import ResidualList
from ports.run_io import UserRules
from ports.run_record import RunRecords
from ports.scheduler import Scheduler
from ports.site import Site
from ports.site_lock import SiteLock
from ports.transport import Transport
from tests.fakes.dunscaith_adapters import NoSignals


def job_stores(sqlite: SqliteStore, postgres: PostgresStore, memory: InMemoryStore) -> None:
    bound: list[JobStore] = [sqlite, postgres, memory]
    del bound


def schedulers(slurm: SlurmCliScheduler, local: LocalScheduler, shared: SharedQueryScheduler,
               fake: FakeScheduler) -> None:
    bound: list[Scheduler] = [slurm, local, shared, fake]
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

