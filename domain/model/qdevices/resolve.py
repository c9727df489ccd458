"""The seed's resolve table, and "A record of another runner": which decision takes which order.

``decide`` is pure: it takes the order as folded from its record, the option given and the time,
and returns the decision to write, or refuses with the reason and what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from dunscaith.domain.model.qdevices.answers import job_id_readable
from dunscaith.domain.model.qdevices.errors import QdevicesError
from dunscaith.domain.model.qdevices.orders import OrderOutcome, OrderState, OrderView
from dunscaith.domain.model.qdevices.sites import SiteName

NEW_AT_LEAST = timedelta(days=3)
NEW_LAST_WITHIN = timedelta(hours=24)
EXPIRED_APART = timedelta(minutes=10)


class Option(StrEnum):
    JOB = "job"
    NONE = "none"
    EXPIRED = "expired"
    OVER_LIMIT = "over_limit"
    GONE = "gone"


class ResolveRefused(QdevicesError, ValueError):
    """This decision does not take this order; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class ResolveCase:
    order: OrderView
    site: SiteName
    own_record: bool  # False: a record of another runner (read through older_records)
    now: datetime
    job_seconds_limit: int


@dataclass(frozen=True, slots=True)
class Decision:
    option: Option
    job: str | None
    final: bool
    counts_at_limit: bool


def _label(order: OrderView) -> str:
    return f"order {order.index} ({order.name})"


def only_new(order: OrderView, now: datetime) -> bool:
    """Piast-Q: every status with a state says New, the first 3 days old or more, the last at most 24 h."""
    named = [mark for mark in order.statuses if mark.state is not None]
    if not named or any(mark.state.lower() != "new" for mark in named if mark.state is not None):
        return False
    return now - named[0].at >= NEW_AT_LEAST and now - named[-1].at <= NEW_LAST_WITHIN


def expired_twice(order: OrderView) -> bool:
    times = order.expired_at
    return len(times) >= 2 and max(times) - min(times) >= EXPIRED_APART


def over_limit(order: OrderView, limit: int) -> bool:
    return order.outcome in (OrderOutcome.COMPLETED, OrderOutcome.FAILED, OrderOutcome.CANCELLED) and (
        order.seconds is not None and order.seconds > limit
    )


def decide(case: ResolveCase, option: Option, job: str | None = None) -> Decision:
    order = case.order
    label = _label(order)
    if (option is Option.JOB) != (job is not None):
        raise ResolveRefused("--job takes the job id; the other options take none")
    if order.state is OrderState.UNSENT:
        raise ResolveRefused(f"{label} was never sent: there is nothing to resolve")
    if order.resolution is not None and order.state is OrderState.FINAL and option is not Option.OVER_LIMIT:
        raise ResolveRefused(f"{label} is already decided (--{order.resolution.replace('_', '-')})")
    if case.own_record:
        return _decide_own(case, option, job, label)
    return _decide_other(case, option, label)


def _over_limit(case: ResolveCase, label: str) -> Decision:
    order = case.order
    if order.state is not OrderState.FINAL or not over_limit(order, case.job_seconds_limit):
        raise ResolveRefused(f"--over-limit takes a final order whose result has more seconds than "
                             f"job_seconds_limit {case.job_seconds_limit}; {label} is not one")
    if order.counts_at_limit:
        raise ResolveRefused(f"{label} already counts at job_seconds_limit")
    return Decision(Option.OVER_LIMIT, None, True, True)


def _decide_own(case: ResolveCase, option: Option, job: str | None, label: str) -> Decision:
    """A record of this app: the rows of seed 002's resolve table, one function per option."""
    if option is Option.GONE:
        raise ResolveRefused("--gone takes only a record of another runner; here --expired takes such an order")
    if option is Option.OVER_LIMIT:
        return _over_limit(case, label)
    if case.order.state is OrderState.FINAL:
        raise ResolveRefused(f"{label} is final: resolve takes it only with --over-limit")
    if option is Option.JOB:
        assert job is not None
        return _own_job(case, job, label)
    if option is Option.NONE:
        return _own_none(case, label)
    if option is Option.EXPIRED:
        return _own_expired(case, label)
    raise ResolveRefused(f"--{option.value} does not take {label}")  # pragma: no cover - every option is above


def _id_unreadable(order: OrderView) -> bool:
    """An order whose job id no URL can hold (a newline in it): no read of its state can name the job."""
    return order.job is not None and not job_id_readable(order.job)


def _own_job(case: ResolveCase, job: str, label: str) -> Decision:
    if not job_id_readable(job):
        raise ResolveRefused("that job id cannot be read at the site (a newline, a control character or "
                             "[REDACTED] in it): give the id the site shows")
    if case.order.state is OrderState.LOST or _id_unreadable(case.order):
        return Decision(Option.JOB, job, False, False)
    raise ResolveRefused(f"{label} is open with its job: a resume collects it "
                         "(send MANIFEST --live --resume RECORD)")


def _own_none(case: ResolveCase, label: str) -> Decision:
    order = case.order
    if order.state is OrderState.LOST:
        return Decision(Option.NONE, None, True, False)
    if _id_unreadable(order):  # no read can name the job: it may exist, so it counts
        return Decision(Option.NONE, None, True, True)
    if case.site is SiteName.VLQ and order.last_stop == "submit_unknown":
        return Decision(Option.NONE, None, True, False)
    if case.site is SiteName.PIASTQ and only_new(order, case.now):
        return Decision(Option.NONE, None, True, True)
    raise ResolveRefused(
        f"--none does not take {label}: it is open; resume to collect it, or ask the site and resume "
        "once the job is final")


def _own_expired(case: ResolveCase, label: str) -> Decision:
    order = case.order
    if case.site is SiteName.PIASTQ and order.state is OrderState.OPEN and order.last_stop == "result_expired":
        if expired_twice(order):
            return Decision(Option.EXPIRED, None, True, True)
        raise ResolveRefused(f"--expired needs two calls 10 minutes or more apart that got result_expired "
                             f"for {label}: resume again later")
    raise ResolveRefused(f"--expired takes an open Piast-Q order whose last stop is result_expired; "
                         f"{label} is not one")


def _decide_other(case: ResolveCase, option: Option, label: str) -> Decision:
    order = case.order
    if option in (Option.JOB, Option.EXPIRED):
        raise ResolveRefused(f"--{option.value} is refused on a record of another runner: this app does not "
                             "collect it; collect it with its runner")
    if option is Option.OVER_LIMIT:
        return _over_limit(case, label)
    if option is Option.NONE:
        if order.state is OrderState.LOST:
            return Decision(Option.NONE, None, True, False)
        raise ResolveRefused(f"--none takes a lost order of another runner's record; {label} is {order.state.value}")
    if order.state is OrderState.OPEN:  # --gone
        return Decision(Option.GONE, None, True, True)
    raise ResolveRefused(f"--gone takes an open order of another runner's record; {label} is {order.state.value}")
