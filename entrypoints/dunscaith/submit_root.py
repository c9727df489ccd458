"""The plain composition root of a plain ``submit -- COMMAND`` (the front door's submit path), and the
builders of what a supervision uses that it shares with the job container.

A ``submit -- true`` on the local scheduler is a command a user waits on to its end; the goal is 3x
``dunscaith --help``. Importing typer with its pydantic adapters, dependency-injector and the pydantic
settings costs more than the whole of that on this 2-core host, so the front door's plain submit
(``submits.py``) runs ``submit``'s own body (``submit_job.py``) over this root, built by hand as
``read_root.py``'s is, from the same builders as ``container.py``'s providers (``read_root``'s for the
store, pointers, the residual list, clock, host, crash points and a cluster's scheduler; these for the
escalation delivery, the signals, the live view, the output files, the supervisor and the use cases
submit asks ``edge.use_cases`` for): the same use cases, wired the same way.

The settings are ``settings_cache.submit_settings``' (the remembered answer of ``load_settings``, in the
shape of ``DunscaithSettings``); a Slurm cluster is opened from ``load_settings`` itself (``read_root``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import IO, TYPE_CHECKING, Any

from dunscaith.entrypoints.dunscaith import kinds
from dunscaith.entrypoints.dunscaith.read_root import ReadRoot

if TYPE_CHECKING:
    from dunscaith.adapters.escalation.command import CommandEscalationDelivery
    from dunscaith.adapters.escalation.notice_command import CommandNoticeDelivery
    from dunscaith.adapters.progress.output_files import OutputFiles
    from dunscaith.adapters.progress.terminal import TerminalProgress
    from dunscaith.adapters.signals.posix import SignalInterrupts
    from dunscaith.domain.model.jobs.ids import JobId
    from dunscaith.domain.services.jobs.job_output import JobOutputs
    from dunscaith.domain.services.jobs.notify import Notifier
    from dunscaith.domain.services.jobs.submit import RecordJob
    from dunscaith.domain.services.jobs.supervise import Supervisor
    from dunscaith.domain.services.jobs.supervise_job import SuperviseJob
    from dunscaith.domain.services.jobs.sweep import SweepReport
    from dunscaith.entrypoints.dunscaith.settings import DunscaithSettings
    from dunscaith.entrypoints.dunscaith.submit_settings import SubmitSettings
    from dunscaith.ports.clock import Clock
    from dunscaith.ports.crash_points import CrashPoints
    from dunscaith.ports.escalation_delivery import EscalationDelivery
    from dunscaith.ports.job_progress import JobProgress
    from dunscaith.ports.job_store import JobStore
    from dunscaith.ports.notice_delivery import NoticeDelivery
    from dunscaith.ports.residual import ResidualList
    from dunscaith.ports.scheduler import Scheduler

    Settings = DunscaithSettings | SubmitSettings  # what both roots give the builders below


# --- the builders both roots use (container.py names each in a provider) --------------------------------
def delivery(settings: Settings) -> CommandEscalationDelivery:
    from dunscaith.adapters.escalation.command import CommandEscalationDelivery

    return CommandEscalationDelivery(settings.escalations.command, settings.escalations.timeout)


def notices(settings: Settings) -> CommandNoticeDelivery:
    from dunscaith.adapters.escalation.notice_command import CommandNoticeDelivery

    return CommandNoticeDelivery(settings.notify.command, settings.notify.timeout)


def notifier(settings: Settings, delivery: NoticeDelivery, clock: Clock, store: JobStore, here: str) -> Notifier:
    from dunscaith.domain.services.jobs.notify import Notifier

    return Notifier(delivery, clock, store, here, first_backoff=settings.supervise.poll)


def interrupts(settings: Settings) -> SignalInterrupts:
    from dunscaith.adapters.signals.posix import SignalInterrupts

    # TERM always, INT and HUP unless ignored at start; the drain bound, then the signal again (seed 000)
    return SignalInterrupts(always=SignalInterrupts.TERM, drain=settings.supervise.drain)


def progress(job: JobId, stream: IO[str] | None = None, follow: bool = False) -> TerminalProgress:
    from dunscaith.adapters.progress.terminal import TerminalProgress

    return TerminalProgress(job, stream, follow=follow)


def output_files() -> OutputFiles:
    from dunscaith.adapters.progress.output_files import OutputFiles

    return OutputFiles()


def supervisor(settings: Settings, store: JobStore, schedulers: Callable[[str], Scheduler], clock: Clock,
               crash: CrashPoints, delivery: EscalationDelivery, residual: ResidualList, *, cluster: str,
               progress: JobProgress, notifier: Notifier | None = None) -> Supervisor:
    from dunscaith.domain.model.jobs.policy import Policy
    from dunscaith.domain.model.jobs.residual import ResidualPolicy
    from dunscaith.domain.services.jobs.supervise import SuperviseSettings, Supervisor

    s = settings.supervise
    return Supervisor(store=store, scheduler=schedulers(cluster), clock=clock, crash=crash, progress=progress,
                      settings=SuperviseSettings(poll=s.poll, poll_max=s.poll_max, giveup=s.giveup, wait=s.wait,
                                                 drain=s.drain),
                      policy=Policy(absence_deadline=timedelta(seconds=s.absence),
                                    residual=ResidualPolicy(settings.residual.policy)),
                      delivery=delivery, residual=residual, capabilities=kinds.capabilities, notifier=notifier)


def record_job(**ports: Any) -> RecordJob:
    from dunscaith.domain.services.jobs.submit import RecordJob

    return RecordJob(capabilities=kinds.capabilities, **ports)  # a kind's objects bound to this host: recorded


def job_outputs(**ports: Any) -> JobOutputs:
    from dunscaith.domain.services.jobs.job_output import JobOutputs

    return JobOutputs(**ports)


def supervise_job(**ports: Any) -> SuperviseJob:
    from dunscaith.domain.services.jobs.supervise_job import SuperviseJob

    return SuperviseJob(**ports)


# --- the plain submit's root ------------------------------------------------------------------------------
class SubmitRoot(ReadRoot):
    """submit's use cases over the SQLite store, wired as ``container.Container`` wires them: the read
    root's adapters and use cases (the Unattended notice's, the store check's), and a supervision's.

    ``edge`` reaches it as it reaches the container (``ctx.obj``); ``settings()`` is the submit settings
    (``DunscaithSettings``' shape), ``shutdown_resources`` closes the store and the opened schedulers."""

    def __init__(self, settings: SubmitSettings) -> None:
        super().__init__(settings.read)
        self._submit = settings

    def settings(self) -> SubmitSettings:  # type: ignore[override]  # the read settings and more, as the container's
        return self._submit

    # --- the adapters (container.Adapters' providers of the same names)
    def interrupts(self) -> SignalInterrupts:
        return self._once("interrupts", lambda: interrupts(self._submit))

    def delivery(self) -> CommandEscalationDelivery:
        return self._once("delivery", lambda: delivery(self._submit))

    def notices(self) -> CommandNoticeDelivery:
        return self._once("notices", lambda: notices(self._submit))

    def output_files(self) -> OutputFiles:
        return self._once("output_files", output_files)

    # --- the use cases (container.UseCases' providers of the same names)
    def supervisor(self, *, cluster: str, progress: JobProgress) -> Supervisor:
        return supervisor(self._submit, self.store(), self.schedulers(), self.clock(), self.crash(), self.delivery(),
                          self.residual(), cluster=cluster, progress=progress,
                          notifier=notifier(self._submit, self.notices(), self.clock(), self.store(),
                                            self.host().identity().hostname))

    def record_job(self) -> RecordJob:
        return record_job(store=self.store(), clock=self.clock(), crash=self.crash(), host=self.host(),
                          schedulers=self.schedulers(), pointers=self.pointers())

    def job_outputs(self) -> JobOutputs:
        return job_outputs(files=self.output_files(), schedulers=self.schedulers(), clock=self.clock(),
                           record_root=str(self._submit.records.root))

    def supervise_job(self, *, on_problem: Callable[[str], None],
                      on_sweep: Callable[[SweepReport], None]) -> SuperviseJob:
        from dunscaith.entrypoints.dunscaith.install import own_binary

        return supervise_job(store=self.store(), pointers=self.pointers(), owning=self.owning_host(),
                             here=self.host().identity(), binary=own_binary(), supervisor=self.supervisor,
                             views=progress, sweep=self.sweep(), outputs=self.job_outputs(),
                             poll=self._submit.supervise.poll, on_problem=on_problem, on_sweep=on_sweep)
