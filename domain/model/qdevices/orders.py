"""Orders and the fold from a record's lines to the state of each order.

unsent -> sending -> lost | open | final. A record read from disk has no live writer (the reader
holds the site lock, or only displays), so an order whose "submitting" line has no answer is lost:
the request may have reached the site.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum

from dunscaith.domain.model.qdevices.errors import QdevicesError
from dunscaith.domain.model.qdevices.lines import APP, Line, LineType


class OrderState(StrEnum):
    UNSENT = "unsent"
    SENDING = "sending"  # only inside a live call, between "submitting" and the answer
    LOST = "lost"  # a "submitting" line, no job id: never sent again, blocks a new run
    OPEN = "open"  # a job id, no result: a resume collects it
    FINAL = "final"


class OrderOutcome(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    REFUSED = "refused"
    NOT_SUBMITTED = "not_submitted"
    RESOLVED = "resolved"


class RecordError(QdevicesError, ValueError):
    """The lines do not make a record of this app (no start line, unknown order, ...)."""


@dataclass(frozen=True, slots=True)
class StatusMark:
    at: datetime
    state: str | None  # the site's word; None for a missed poll


@dataclass(frozen=True, slots=True)
class OrderView:
    index: int
    name: str
    state: OrderState = OrderState.UNSENT
    job: str | None = None
    created: bool = False
    uploaded: bool = False
    submitted: bool = False
    statuses: tuple[StatusMark, ...] = ()
    outcome: OrderOutcome | None = None
    seconds: float | None = None  # device seconds measured by the site
    resolution: str | None = None  # the resolve option that decided it
    counts_at_limit: bool = False  # a decision that charges job_seconds_limit whatever was measured
    last_stop: str | None = None
    expired_at: tuple[datetime, ...] = ()  # times of result_expired stops


@dataclass(frozen=True, slots=True)
class Stop:
    at: datetime
    reason: str
    order: int | None
    job: str | None
    detail: str


@dataclass(frozen=True, slots=True)
class RunView:
    site: str
    site_device: str
    run: str
    host: str
    path: str
    device: int
    inode: int
    job_seconds_limit: int
    orders: tuple[OrderView, ...]
    stops: tuple[Stop, ...] = field(default=())
    first_line_is_ours: bool = True

    def order(self, index: int) -> OrderView:
        if not 1 <= index <= len(self.orders):
            raise RecordError(f"the record has no order {index} (it has 1 to {len(self.orders)})")
        return self.orders[index - 1]

    def by_name_or_number(self, text: str) -> OrderView:
        if text.isdigit():
            return self.order(int(text))
        for view in self.orders:
            if view.name == text:
                return view
        raise RecordError(f"the record has no order named {text!r}")


def apply_line(view: OrderView, line: Line) -> OrderView:
    d = line.data
    kind = line.type
    if kind is LineType.SUBMITTING:
        return replace(view, state=OrderState.LOST)
    if kind is LineType.CREATED:
        return replace(view, state=OrderState.OPEN, job=d["job"], created=True)
    if kind is LineType.UPLOADED:
        return replace(view, state=OrderState.OPEN, job=d["job"], uploaded=True)
    if kind is LineType.SUBMITTED:
        return replace(view, state=OrderState.OPEN, job=d["job"], submitted=True)
    if kind is LineType.STATUS:
        return replace(view, statuses=(*view.statuses, StatusMark(line.at, d["state"])))
    if kind is LineType.RESULT:
        seconds = d["seconds"]
        return replace(view, state=OrderState.FINAL, job=d["job"], outcome=OrderOutcome(d["outcome"]),
                       seconds=float(seconds) if seconds is not None else None)
    if kind is LineType.REFUSED:
        return replace(view, state=OrderState.FINAL, outcome=OrderOutcome.REFUSED)
    if kind is LineType.NOT_SUBMITTED:
        return replace(view, state=OrderState.FINAL, outcome=OrderOutcome.NOT_SUBMITTED)
    if kind is LineType.NOT_SENT:
        return not_sent(view, d["step"])
    if kind is LineType.STOP:
        expired = (*view.expired_at, line.at) if d["reason"] == "result_expired" else view.expired_at
        return replace(view, last_stop=d["reason"], expired_at=expired)
    if kind is LineType.RESOLVE:
        return apply_decision(view, d["option"], d["job"], d["counts_at_limit"], d["final"])
    return view


def not_sent(view: OrderView, step: str) -> OrderView:
    """A request proven never written undoes the step it would have made: no "submitting" after a
    create that never left (the order is unsent again, and a resume sends it), no "uploaded" after a
    VLQ SubmitJob that never left (SubmitJob was never sent). An upload that never left changes nothing."""
    if step == "create" and view.job is None:
        return replace(view, state=OrderState.UNSENT)
    if step == "submit" and not view.submitted:
        return replace(view, uploaded=False)
    return view


def apply_decision(view: OrderView, option: str, job: str | None, counts_at_limit: bool, final: bool) -> OrderView:
    if not final:
        # --job ID: the order is open with that job, and a resume collects it. It gains no "submitted"
        # line: a VLQ job found this way is read through the resume table, never submitted.
        return replace(view, state=OrderState.OPEN, job=job, resolution=option)
    if view.state is OrderState.FINAL and view.outcome is not OrderOutcome.RESOLVED:
        # --over-limit: the result stands, measured seconds stay; only the charge changes
        return replace(view, resolution=option, counts_at_limit=counts_at_limit)
    return replace(view, state=OrderState.FINAL, outcome=OrderOutcome.RESOLVED, resolution=option,
                   counts_at_limit=counts_at_limit)


def fold(lines: Sequence[Line]) -> RunView:
    """The state of every order of a record, from its lines in order."""
    if not lines or lines[0].type is not LineType.START:
        raise RecordError("the first line is not a start line")
    start = lines[0].data
    orders = [OrderView(i, name) for i, name in enumerate(start["orders"], start=1)]
    stops: list[Stop] = []
    for number, line in enumerate(lines[1:], start=2):
        if line.type is LineType.STOP:
            stops.append(Stop(line.at, line.data["reason"], line.data["order"], line.data["job"], line.data["detail"]))
        index = line.order
        if index is None:
            continue
        if not 1 <= index <= len(orders):
            raise RecordError(f"line {number} names order {index}, which the start line does not list")
        orders[index - 1] = apply_line(orders[index - 1], line)
    return RunView(
        site=start["site"], site_device=start["site_device"], run=start["run"], host=start["host"],
        path=start["path"], device=start["device"], inode=start["inode"], job_seconds_limit=start["job_seconds_limit"],
        orders=tuple(orders),
        stops=tuple(stops), first_line_is_ours=start["app"] == APP,
    )


def orders_in(views: Iterable[RunView], state: OrderState) -> list[tuple[RunView, OrderView]]:
    return [(run, order) for run in views for order in run.orders if order.state is state]
