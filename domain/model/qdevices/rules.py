"""The generic rules, checked before each job and after its result."""

from __future__ import annotations

from dunscaith.domain.model.qdevices.budget import BudgetCheck
from dunscaith.domain.model.qdevices.manifest import Limits, OrderSpec


def before_order(order: OrderSpec, limits: Limits, budget: BudgetCheck) -> str | None:
    """Why the order may not be sent now, or None."""
    if order.shots > limits.max_shots:
        return f"order {order.index} ({order.name}) asks {order.shots} shots, more than max_shots {limits.max_shots}"
    if not budget.allowed:
        return (f"budget: the site's bound is {budget.bound_before:g} s; order {order.index} ({order.name}) "
                f"may take {budget.order_at_most} s more, over budget_seconds {budget.budget}")
    return None


def after_result(order: OrderSpec, limits: Limits, seconds: float | None) -> str | None:
    """Why the run must not go on after this result, or None."""
    if seconds is not None and seconds > limits.job_seconds_limit:
        return (f"order {order.index} ({order.name}) took {seconds:g} s, more than job_seconds_limit "
                f"{limits.job_seconds_limit}: see `qdevices resolve ... --over-limit`")
    return None
