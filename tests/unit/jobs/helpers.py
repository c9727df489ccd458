"""Test doubles for the supervisor's small ports, and a ready-made supervisor on fakes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.residual import ResidualPolicy
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import JobState, fold
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.domain.services.jobs.supervise import SuperviseSettings, SupervisionEnd, Supervisor
from dunscaith.entrypoints.dunscaith.root.kinds import capabilities
from dunscaith.ports.clock import Clock


class NoCrash:
    def __init__(self) -> None:
        self.points: list[str] = []

    def reached(self, point: str) -> None:
        self.points.append(point)


class StopAfter:
    """A stop requested after ``waits`` sleeps of the loop (a signal arriving mid-supervision)."""

    def __init__(self, clock: Clock, waits: int | None = None) -> None:
        self._clock = clock
        self._left = waits
        self.flag = False

    def pending(self) -> str | None:
        return "SIGTERM" if self.flag else None

    def wake(self) -> None:
        pass

    def wait(self, seconds: float) -> str | None:
        self._clock.sleep(seconds)
        if self._left is not None:
            self._left -= 1
            if self._left <= 0:
                self.flag = True
        return self.pending()


@dataclass
class Progress:
    events: list[ev.Event] = field(default_factory=list)
    alive: list[datetime] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def committed(self, state: JobState, event: ev.Event) -> None:
        self.events.append(event)

    def supervised(self, state: JobState, at: datetime) -> None:
        self.alive.append(at)

    def note(self, text: str) -> None:
        self.notes.append(text)


@dataclass
class Rig:
    clock: FakeClock
    store: InMemoryStore
    scheduler: FakeScheduler
    progress: Progress
    crash: NoCrash
    supervisor: Supervisor
    residual: InMemoryResidualList

    def record(self, name: str = "j1", max_attempts: int = 3) -> JobId:
        spec = JobSpec(JobId(name), "local", "fake", ("true",), max_attempts=max_attempts)  # the fake can requeue
        return RecordJob(self.store, self.clock, self.crash)(spec)

    def run(self, job: JobId, cancel: StopAfter | None = None) -> SupervisionEnd:
        with self.store.lock(job) as lock:
            return supervise_one(self.supervisor, job, lock, cancel or StopAfter(self.clock))

    def state(self, job: JobId) -> JobState:
        return fold(self.store.read(job))

    def kinds(self, job: JobId) -> list[str]:
        return [line.kind for line in self.store.read(job).events]


def rig(exit_code: int | None = 0, *, poll: float = 1.0, giveup: float = 30.0, wait: float = 10.0,
        absence: float = 5.0, store: InMemoryStore | None = None,
        residual_policy: ResidualPolicy = ResidualPolicy.LIST, crash: NoCrash | None = None) -> Rig:
    clock = FakeClock()
    store = store or InMemoryStore()
    scheduler = FakeScheduler(exit_code_of=(lambda spec: exit_code) if exit_code is not None else None)
    progress = Progress()
    crash = crash or NoCrash()
    counter = iter(range(1, 1000))
    residual = InMemoryResidualList()
    from datetime import timedelta

    supervisor = Supervisor(store, scheduler, clock, crash, progress,
                            SuperviseSettings(poll=poll, giveup=giveup, wait=wait, drain=2.0),
                            Policy(absence_deadline=timedelta(seconds=absence), residual=residual_policy),
                            nonces=lambda: Nonce(f"n{next(counter)}"), residual=residual,
                            capabilities=capabilities)  # what each kind declares (the local one cannot requeue)
    return Rig(clock, store, scheduler, progress, crash, supervisor, residual)
