"""Run the ``Sweep`` use case over one scheduler, for residual targets given as a mapping.

``sweep_once(scheduler, {name: nonces or None})`` lists one entry per nonce (an attempt of unknown
outcome) or one ``pruned`` entry (None: any not-started object of the name), sweeps once and returns
the report. ``Counting`` wraps a scheduler and counts the calls a sweep makes, so a test can say
"one query, one cancel" for any scheduler, real ones included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import QueryResult
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReason
from dunscaith.domain.services.jobs.sweep import Sweep, SweepReport
from dunscaith.ports.scheduler import Scheduler

CLUSTER = "here"


class Counting:
    """A scheduler that counts the sweep's calls and passes every call on."""

    def __init__(self, inner: Scheduler) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()
        self.confirmed: list[bool] = []  # confirm_absent of each query

    @property
    def user(self) -> str:
        return self.inner.user

    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        self.calls["query"] += 1
        self.confirmed.append(confirm_absent)
        return self.inner.query(names, confirm_absent=confirm_absent)

    def cancel_if_not_started(self, object_ids: Sequence[ObjectId]) -> list[ObjectId]:
        self.calls["cancel_if_not_started"] += 1
        return self.inner.cancel_if_not_started(object_ids)

    def __getattr__(self, name: str) -> object:
        self.calls[name] += 1
        return getattr(self.inner, name)


def entries_for(targets: Mapping[JobId, frozenset[Nonce] | None], now: datetime) -> list[ResidualEntry]:
    entries = []
    for name, nonces in targets.items():
        if nonces is None:
            entries.append(ResidualEntry(name, CLUSTER, "any", ResidualReason.PRUNED, None, None, now))
            continue
        for attempt, nonce in enumerate(sorted(nonces), start=1):
            entries.append(ResidualEntry(name, CLUSTER, "any", ResidualReason.UNKNOWN, attempt, nonce, now))
    return entries


def sweep_once(scheduler: Scheduler | Counting, targets: Mapping[JobId, frozenset[Nonce] | None]) -> SweepReport:
    clock, residual = FakeClock(), InMemoryResidualList()
    for entry in entries_for(targets, clock.now()):
        residual.add(entry)
    return Sweep(residual, lambda cluster: scheduler, clock)()  # type: ignore[arg-type, return-value]


def stopped_ids(report: SweepReport) -> list[ObjectId]:
    return sorted(oid for _, oid in report.stopped)
