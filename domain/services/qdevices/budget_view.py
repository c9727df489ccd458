"""Where a site's budget stands: every record the budget reads, each order's charge in its parts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dunscaith.domain.model.qdevices.budget import split
from dunscaith.domain.model.qdevices.orders import OrderState
from dunscaith.domain.services.qdevices.site_runs import load_site_runs
from dunscaith.ports.run_record import RunRecords


@dataclass(frozen=True, slots=True)
class RecordBudget:
    path: str
    own: bool  # False: a record of another runner, read through older_records
    used: float  # device seconds the site measured
    at_limit: float  # seconds counted at job_seconds_limit
    lost: int
    open: int

    @property
    def bound(self) -> float:
        return self.used + self.at_limit


@dataclass(frozen=True, slots=True)
class SiteBudget:
    site: str
    records: tuple[RecordBudget, ...]
    budget: int | None  # budget_seconds, when given

    @property
    def used(self) -> float:
        return sum(r.used for r in self.records)

    @property
    def at_limit(self) -> float:
        return sum(r.at_limit for r in self.records)

    @property
    def bound(self) -> float:
        return self.used + self.at_limit

    @property
    def left(self) -> float | None:
        return None if self.budget is None else self.budget - self.bound


class ShowBudget:
    def __init__(self, records: RunRecords) -> None:
        self.records = records

    def __call__(self, site: str, older: Sequence[str], budget: int | None = None) -> SiteBudget:
        """The site's figures from every record its budget bound reads (CallRefused if one cannot be read:
        the bound is never made from part of them)."""
        rows = []
        for run in load_site_runs(self.records, site, older):
            parts = [split(o, run.view.job_seconds_limit) for o in run.view.orders]
            rows.append(RecordBudget(run.path, run.own, sum(p[0] for p in parts), sum(p[1] for p in parts),
                                     sum(o.state in (OrderState.LOST, OrderState.SENDING) for o in run.view.orders),
                                     sum(o.state is OrderState.OPEN for o in run.view.orders)))
        return SiteBudget(site, tuple(rows), budget)
