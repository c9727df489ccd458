"""Decisions on records of another runner, kept in the site's older_decisions.jsonl.

Such a record is never written. A decision holds only while the order is as it was decided on:
a job id, a new job or a result that the other runner writes later stands.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from dunscaith.domain.model.qdevices.orders import OrderView, RunView, apply_decision
from dunscaith.domain.model.qdevices.resolve import Decision
from dunscaith.domain.model.strict_json import DecodeError, FieldSpec, check_fields

DECISION_FIELDS: FieldSpec = {
    "type": (str,), "at": (str,), "record": (str,), "order": (int,), "option": (str,),
    "counts_at_limit": (bool,), "final": (bool,), "seen_state": (str,), "seen_job": (str, type(None)),
    "seen_outcome": (str, type(None)),
}


@dataclass(frozen=True, slots=True)
class OlderDecision:
    at: datetime
    record: str  # the record's absolute path
    order: int
    option: str
    counts_at_limit: bool
    final: bool
    seen_state: str
    seen_job: str | None
    seen_outcome: str | None

    def holds_for(self, order: OrderView) -> bool:
        outcome = order.outcome.value if order.outcome is not None else None
        return (order.state.value, order.job, outcome) == (self.seen_state, self.seen_job, self.seen_outcome)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "decision", "at": self.at.isoformat(), "record": self.record, "order": self.order,
            "option": self.option, "counts_at_limit": self.counts_at_limit, "final": self.final,
            "seen_state": self.seen_state, "seen_job": self.seen_job, "seen_outcome": self.seen_outcome,
        }


def make_decision(record: str, order: OrderView, decision: Decision, at: datetime) -> OlderDecision:
    return OlderDecision(at, record, order.index, decision.option.value, decision.counts_at_limit, decision.final,
                         order.state.value, order.job, order.outcome.value if order.outcome else None)


def from_json(obj: dict[str, Any], where: str) -> OlderDecision:
    check_fields(obj, DECISION_FIELDS, where)
    if obj["type"] != "decision":
        raise DecodeError(f"{where}: not a decision line")
    try:
        at = datetime.fromisoformat(obj["at"])
    except ValueError:
        raise DecodeError(f"{where}: field at is not a time") from None
    return OlderDecision(at, obj["record"], obj["order"], obj["option"], obj["counts_at_limit"], obj["final"],
                         obj["seen_state"], obj["seen_job"], obj["seen_outcome"])


def apply_older(run: RunView, record: str, decisions: Iterable[OlderDecision]) -> RunView:
    """The run as this app counts it: each decision on it that still holds, applied in order."""
    orders = list(run.orders)
    for d in decisions:
        if d.record != record or not 1 <= d.order <= len(orders):
            continue
        current = orders[d.order - 1]
        if d.holds_for(current):
            orders[d.order - 1] = apply_decision(current, d.option, None, d.counts_at_limit, d.final)
    return replace(run, orders=tuple(orders))
