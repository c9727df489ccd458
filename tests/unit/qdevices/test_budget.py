"""The budget bound: a lost or open order counts job_seconds_limit, so the sum is an upper bound."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.qdevices.budget import BudgetCheck, bound, charge, plan_bound
from dunscaith.domain.model.qdevices.lines import LineType
from dunscaith.domain.model.qdevices.orders import fold
from tests.unit.qdevices.lines_kit import Kit

LIMIT = 100


def test_unsent_counts_nothing() -> None:
    assert charge(fold(Kit().lines).order(1), LIMIT) == 0


def test_lost_counts_at_the_limit() -> None:
    assert charge(fold(Kit().submitting().lines).order(1), LIMIT) == LIMIT


def test_open_counts_at_the_limit() -> None:
    assert charge(fold(Kit().submitting().submitted().lines).order(1), LIMIT) == LIMIT


def test_a_result_counts_its_measured_seconds() -> None:
    assert charge(fold(Kit().submitting().submitted().result(seconds=7).lines).order(1), LIMIT) == 7


def test_a_result_with_no_measured_time_counts_at_the_limit() -> None:
    kit = Kit().submitting().submitted().result(seconds=None, outcome="failed")
    assert charge(fold(kit.lines).order(1), LIMIT) == LIMIT


def test_a_refusal_counts_nothing() -> None:
    kit = Kit().submitting().add(LineType.REFUSED, order=1, status=403, detail="")
    assert charge(fold(kit.lines).order(1), LIMIT) == 0


@pytest.mark.parametrize(("counts_at_limit", "expected"), [(True, LIMIT), (False, 0)])
def test_a_resolved_order_counts_as_its_decision_says(counts_at_limit: bool, expected: int) -> None:
    kit = Kit().submitting().add(LineType.RESOLVE, order=1, option="none", job=None,
                                 counts_at_limit=counts_at_limit, final=True)
    assert charge(fold(kit.lines).order(1), LIMIT) == expected


def test_over_limit_counts_the_limit_and_keeps_the_measured_seconds() -> None:
    kit = Kit().submitting().submitted().result(seconds=500).add(
        LineType.RESOLVE, order=1, option="over_limit", job=None, counts_at_limit=True, final=True)
    order = fold(kit.lines).order(1)
    assert charge(order, LIMIT) == LIMIT and order.seconds == 500


def test_the_bound_sums_every_record_each_at_its_own_limit() -> None:
    a = fold(Kit(limit=10).submitting(1).lines)
    b = fold(Kit(limit=30).submitting(1).submitted(1).result(1, seconds=4).submitting(2).lines)
    assert bound([a, b]) == 10 + 4 + 30


def test_budget_check_allows_up_to_the_budget_exactly() -> None:
    assert BudgetCheck(50, 50, 100).allowed
    assert not BudgetCheck(51, 50, 100).allowed


def test_the_dry_runs_bound_counts_each_planned_order_at_the_limit() -> None:
    assert plan_bound(12.5, 3, 100) == 312.5
