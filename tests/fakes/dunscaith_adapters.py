"""The whole set of dunscaith's adapters as fakes, swapped in at once:
``container.adapters.override(FakeAdapters())``.

Each is a singleton, so a test reaches the very fake the command used through the container
(``container.adapters.pointers()``, ``container.adapters.schedulers()("local")``).
"""

from __future__ import annotations

from collections.abc import Callable

from dependency_injector import containers, providers

from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs.objects import ObjectSpec
from dunscaith.ports.scheduler import Scheduler


class NoSignals:
    """No signal ever arrives, and a wait never sleeps: the loop runs as fast as it can."""

    def install(self) -> NoSignals:
        return self

    def pending(self) -> str | None:
        return None

    def wake(self) -> None:
        pass

    def wait(self, seconds: float) -> str | None:
        return None

    def reraise(self) -> None:
        raise AssertionError("no signal was received")


def _exit_code_of(spec: ObjectSpec) -> int:
    return 0 if spec.command == ("true",) else 1


def _every_cluster(scheduler: FakeScheduler) -> Callable[[str], Scheduler]:
    return lambda cluster: scheduler


class FakeAdapters(containers.DeclarativeContainer):
    store = providers.Singleton(InMemoryStore)
    store_exists = providers.Object(True)  # the memory store is there from the start
    # one fake scheduler behind every cluster
    schedulers = providers.Singleton(_every_cluster, providers.Singleton(FakeScheduler, exit_code_of=_exit_code_of))
    pointers = providers.Singleton(InMemoryPointers)
    residual = providers.Singleton(InMemoryResidualList)
    interrupts = providers.Singleton(NoSignals)
    # the memory store has no whole-store check: nothing to say before a write, nor to doctor
    store_integrity = providers.Object(lambda store: None)
    doctor_integrity = providers.Object(lambda store: None)
