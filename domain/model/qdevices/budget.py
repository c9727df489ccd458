"""The budget bound: device seconds over every record of a site, an upper bound by construction."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dunscaith.domain.model.qdevices.orders import OrderOutcome, OrderState, OrderView, RunView


def charge(order: OrderView, job_seconds_limit: int) -> float:
    """What one order counts in the budget.

    A lost or open order counts job_seconds_limit (its job may run that long), so the sum is an
    upper bound; a result counts its measured seconds unless a decision made it count the limit.
    """
    if order.state is OrderState.UNSENT:
        return 0.0
    if order.state in (OrderState.SENDING, OrderState.LOST, OrderState.OPEN):
        return float(job_seconds_limit)
    if order.counts_at_limit:
        return float(job_seconds_limit)
    if order.outcome in (OrderOutcome.REFUSED, OrderOutcome.NOT_SUBMITTED, OrderOutcome.RESOLVED):
        return 0.0
    if order.seconds is None:  # a job that ended with no measured time may still have used the device
        return float(job_seconds_limit)
    return order.seconds


def bound(runs: Iterable[RunView]) -> float:
    """The site's bound over its records, each order charged at its own record's job_seconds_limit."""
    return sum(charge(o, run.job_seconds_limit) for run in runs for o in run.orders)


@dataclass(frozen=True, slots=True)
class BudgetCheck:
    bound_before: float
    order_at_most: int
    budget: int

    @property
    def allowed(self) -> bool:
        return self.bound_before + self.order_at_most <= self.budget


def plan_bound(existing: float, orders_to_send: int, job_seconds_limit: int) -> float:
    """The dry run's figure: what the site's bound would be if every planned order ran to the limit."""
    return existing + orders_to_send * job_seconds_limit
