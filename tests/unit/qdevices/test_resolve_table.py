"""The seed's resolve table and "A record of another runner": one test per row, and the refusals."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from dunscaith.domain.model.qdevices.lines import LineType
from dunscaith.domain.model.qdevices.orders import OrderView, fold
from dunscaith.domain.model.qdevices.resolve import Decision, Option, ResolveCase, ResolveRefused, decide
from dunscaith.domain.model.qdevices.sites import SiteName
from tests.unit.qdevices.lines_kit import T0, Kit

LIMIT = 100


def order_of(kit: Kit) -> OrderView:
    return fold(kit.lines).order(1)


def own(order: OrderView, site: SiteName = SiteName.MQSS, now_after: timedelta = timedelta(0)) -> ResolveCase:
    return ResolveCase(order, site, True, T0 + now_after, LIMIT)


def other(order: OrderView) -> ResolveCase:
    return ResolveCase(order, SiteName.MQSS, False, T0, LIMIT)


LOST = Kit().submitting()


def open_kit(job: str = "j1") -> Kit:
    return Kit().submitting().submitted(job=job)


# --- the resolve table, a record of this app -------------------------------------------------------
def test_row_lost_job_id_found_in_the_sites_job_list_a_resume_collects_it() -> None:
    assert decide(own(order_of(LOST)), Option.JOB, "j7") == Decision(Option.JOB, "j7", False, False)


def test_row_lost_none_the_job_list_shows_no_job_final_with_no_job() -> None:
    assert decide(own(order_of(LOST)), Option.NONE) == Decision(Option.NONE, None, True, False)


def test_row_open_vlq_last_stop_submit_unknown_none_final_with_no_job() -> None:
    kit = Kit(site="vlq").submitting().add(LineType.CREATED, order=1, job="41")
    kit.add(LineType.UPLOADED, order=1, job="41").stop("submit_unknown")
    assert decide(own(order_of(kit), SiteName.VLQ), Option.NONE) == Decision(Option.NONE, None, True, False)


def test_row_job_id_no_url_can_hold_job_with_the_id_the_site_shows() -> None:
    order = order_of(open_kit("a\nb"))
    assert decide(own(order), Option.JOB, "ab") == Decision(Option.JOB, "ab", False, False)


def test_row_job_id_no_url_can_hold_none_final_counts_at_limit() -> None:
    order = order_of(open_kit("a\nb"))
    assert decide(own(order), Option.NONE) == Decision(Option.NONE, None, True, True)


def test_row_open_shown_only_as_new_piastq_none_counts_at_limit() -> None:
    kit = open_kit().status("New").status(None).status("New", gap=timedelta(days=3))
    now = timedelta(days=3, hours=1)
    assert decide(own(order_of(kit), SiteName.PIASTQ, now), Option.NONE) == Decision(Option.NONE, None, True, True)


def test_row_new_refused_when_the_first_new_is_younger_than_3_days() -> None:
    kit = open_kit().status("New").status("New", gap=timedelta(days=2))
    with pytest.raises(ResolveRefused, match="--none does not take"):
        decide(own(order_of(kit), SiteName.PIASTQ, timedelta(days=2, hours=1)), Option.NONE)


def test_row_new_refused_when_the_last_new_is_older_than_24_hours_resume_once_more() -> None:
    kit = open_kit().status("New").status("New", gap=timedelta(days=3))
    with pytest.raises(ResolveRefused):
        decide(own(order_of(kit), SiteName.PIASTQ, timedelta(days=4, hours=2)), Option.NONE)


def test_row_new_refused_when_a_status_says_something_else() -> None:
    kit = open_kit().status("New").status("Queued").status("New", gap=timedelta(days=3))
    with pytest.raises(ResolveRefused):
        decide(own(order_of(kit), SiteName.PIASTQ, timedelta(days=3, hours=1)), Option.NONE)


def test_row_open_last_stop_result_expired_piastq_expired_final_counts_at_limit() -> None:
    kit = open_kit().stop("result_expired").stop("result_expired", gap=timedelta(minutes=10))
    assert decide(own(order_of(kit), SiteName.PIASTQ), Option.EXPIRED) == Decision(Option.EXPIRED, None, True, True)


def test_row_expired_refused_when_the_two_answers_are_less_than_10_minutes_apart() -> None:
    kit = open_kit().stop("result_expired").stop("result_expired", gap=timedelta(minutes=9))
    with pytest.raises(ResolveRefused, match="10 minutes"):
        decide(own(order_of(kit), SiteName.PIASTQ), Option.EXPIRED)


def test_row_final_result_over_job_seconds_limit_over_limit_counts_at_limit() -> None:
    kit = open_kit().result(seconds=LIMIT + 1)
    assert decide(own(order_of(kit)), Option.OVER_LIMIT) == Decision(Option.OVER_LIMIT, None, True, True)


def test_row_over_limit_refused_when_the_result_is_within_the_limit() -> None:
    with pytest.raises(ResolveRefused, match="--over-limit takes"):
        decide(own(order_of(open_kit().result(seconds=LIMIT))), Option.OVER_LIMIT)


# --- refusals on a record of this app -------------------------------------------------------------
def test_any_other_case_is_refused_open_order_none() -> None:
    with pytest.raises(ResolveRefused, match="open"):
        decide(own(order_of(open_kit())), Option.NONE)


def test_job_on_an_open_order_with_a_good_id_is_refused_a_resume_collects_it() -> None:
    with pytest.raises(ResolveRefused, match="resume collects"):
        decide(own(order_of(open_kit())), Option.JOB, "j2")


def test_job_with_an_id_no_url_can_hold_is_refused() -> None:
    with pytest.raises(ResolveRefused, match="newline"):
        decide(own(order_of(LOST)), Option.JOB, "x\ny")


def test_gone_on_a_record_of_this_app_is_refused_expired_takes_such_an_order() -> None:
    with pytest.raises(ResolveRefused, match="--expired takes such an order"):
        decide(own(order_of(open_kit())), Option.GONE)


def test_expired_on_mqss_is_refused() -> None:
    kit = open_kit().stop("result_expired").stop("result_expired", gap=timedelta(minutes=20))
    with pytest.raises(ResolveRefused):
        decide(own(order_of(kit)), Option.EXPIRED)


def test_an_unsent_order_is_refused() -> None:
    with pytest.raises(ResolveRefused, match="never sent"):
        decide(own(fold(Kit().lines).order(2)), Option.NONE)


def test_a_decided_order_is_not_decided_again() -> None:
    kit = Kit().submitting().add(LineType.RESOLVE, order=1, option="none", job=None, counts_at_limit=False,
                                 final=True)
    with pytest.raises(ResolveRefused, match="already decided"):
        decide(own(order_of(kit)), Option.NONE)


def test_a_final_result_takes_nothing_but_over_limit() -> None:
    with pytest.raises(ResolveRefused, match="final"):
        decide(own(order_of(open_kit().result())), Option.NONE)


# --- a record of another runner -------------------------------------------------------------------
def test_other_runner_lost_none_final_with_no_job() -> None:
    assert decide(other(order_of(LOST)), Option.NONE) == Decision(Option.NONE, None, True, False)


def test_other_runner_open_gone_final_counts_at_limit() -> None:
    assert decide(other(order_of(open_kit())), Option.GONE) == Decision(Option.GONE, None, True, True)


def test_other_runner_over_limit_as_above() -> None:
    kit = open_kit().result(seconds=LIMIT * 2)
    assert decide(other(order_of(kit)), Option.OVER_LIMIT) == Decision(Option.OVER_LIMIT, None, True, True)


def test_other_runner_job_is_refused_collect_it_with_its_runner() -> None:
    with pytest.raises(ResolveRefused, match="collect it with its runner"):
        decide(other(order_of(LOST)), Option.JOB, "j1")


def test_other_runner_expired_is_refused() -> None:
    with pytest.raises(ResolveRefused, match="collect it with its runner"):
        decide(other(order_of(open_kit())), Option.EXPIRED)


def test_other_runner_none_on_an_open_order_is_refused() -> None:
    with pytest.raises(ResolveRefused, match="lost order"):
        decide(other(order_of(open_kit())), Option.NONE)


def test_other_runner_gone_on_a_lost_order_is_refused() -> None:
    with pytest.raises(ResolveRefused, match="open order"):
        decide(other(order_of(LOST)), Option.GONE)


def test_option_and_job_argument_must_agree() -> None:
    with pytest.raises(ResolveRefused):
        decide(own(replace(order_of(LOST))), Option.NONE, "j1")
