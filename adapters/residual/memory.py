"""The residual list in memory, for tests of the use cases that add to it and sweep it."""

from __future__ import annotations

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReading


class InMemoryResidualList:
    def __init__(self) -> None:
        self.kept: dict[tuple[JobId, str], ResidualEntry] = {}
        self.dropped: list[ResidualEntry] = []

    def add(self, entry: ResidualEntry) -> bool:
        if (entry.job, entry.key) in self.kept:
            return False
        self.kept[(entry.job, entry.key)] = entry
        return True

    def entries(self) -> list[ResidualReading]:
        return [ResidualReading(job, key, self.kept[(job, key)]) for job, key in sorted(self.kept)]

    def drop(self, entry: ResidualEntry) -> None:
        if self.kept.pop((entry.job, entry.key), None) is not None:
            self.dropped.append(entry)
