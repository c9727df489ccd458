"""A decision on another runner's record holds only while the order is as it was decided on."""

from __future__ import annotations

from dunscaith.domain.model.qdevices.decisions import apply_older, from_json, make_decision
from dunscaith.domain.model.qdevices.orders import OrderState, fold
from dunscaith.domain.model.qdevices.resolve import Option, ResolveCase, decide
from dunscaith.domain.model.qdevices.sites import SiteName
from tests.unit.qdevices.lines_kit import T0, Kit


def test_a_decision_applies_while_the_order_is_unchanged() -> None:
    view = fold(Kit().submitting().lines)
    d = make_decision("/r", view.order(1), decide(ResolveCase(view.order(1), SiteName.MQSS, False, T0, 9),
                                                  Option.NONE), T0)
    assert apply_older(view, "/r", [from_json(d.to_json(), "x")]).order(1).state is OrderState.FINAL


def test_a_job_id_the_other_runner_writes_later_stands() -> None:
    before = fold(Kit().submitting().lines)
    d = make_decision("/r", before.order(1), decide(ResolveCase(before.order(1), SiteName.MQSS, False, T0, 9),
                                                    Option.NONE), T0)
    after = fold(Kit().submitting().submitted(job="late").lines)
    applied = apply_older(after, "/r", [d]).order(1)
    assert (applied.state, applied.job) == (OrderState.OPEN, "late")


def test_a_decision_on_another_record_is_not_applied() -> None:
    view = fold(Kit().submitting().lines)
    d = make_decision("/other", view.order(1), decide(ResolveCase(view.order(1), SiteName.MQSS, False, T0, 9),
                                                      Option.NONE), T0)
    assert apply_older(view, "/r", [d]).order(1).state is OrderState.LOST
