"""The seed's first table (lost, open) and the rest of the order states, from record lines."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.qdevices.lines import LineType
from dunscaith.domain.model.qdevices.orders import OrderOutcome, OrderState, RecordError, fold
from tests.unit.qdevices.lines_kit import Kit


def test_row_lost_a_submitting_line_and_no_job_id_is_lost() -> None:
    view = fold(Kit().submitting().lines)
    assert view.order(1).state is OrderState.LOST
    assert view.order(1).job is None


def test_row_open_a_job_id_and_no_result_is_open() -> None:
    view = fold(Kit().submitting().submitted(job="j9").status("WAITING", job="j9").lines)
    assert view.order(1).state is OrderState.OPEN
    assert view.order(1).job == "j9"


def test_an_order_with_no_line_is_unsent() -> None:
    view = fold(Kit().submitting(1).lines)
    assert view.order(2).state is OrderState.UNSENT


def test_a_result_makes_the_order_final_with_its_seconds() -> None:
    view = fold(Kit().submitting().submitted().result(seconds=7.5).lines)
    assert (view.order(1).state, view.order(1).outcome, view.order(1).seconds) == (OrderState.FINAL,
                                                                                    OrderOutcome.COMPLETED, 7.5)


def test_a_refused_line_is_final_with_no_job() -> None:
    view = fold(Kit().submitting().add(LineType.REFUSED, order=1, status=401, detail="HTTP 401").lines)
    assert view.order(1).state is OrderState.FINAL and view.order(1).outcome is OrderOutcome.REFUSED


def test_vlq_created_line_makes_the_order_open_with_its_job() -> None:
    kit = Kit(site="vlq").submitting().add(LineType.CREATED, order=1, job="41")
    order = fold(kit.lines).order(1)
    assert (order.state, order.job, order.created, order.uploaded, order.submitted) == (
        OrderState.OPEN, "41", True, False, False)


def test_vlq_uploaded_then_submitted() -> None:
    kit = Kit(site="vlq").submitting().add(LineType.CREATED, order=1, job="41")
    kit.add(LineType.UPLOADED, order=1, job="41").add(LineType.SUBMITTED, order=1, job="41")
    order = fold(kit.lines).order(1)
    assert order.uploaded and order.submitted and order.state is OrderState.OPEN


def test_not_submitted_is_final() -> None:
    kit = Kit(site="vlq").submitting().add(LineType.CREATED, order=1, job="41")
    kit.add(LineType.NOT_SUBMITTED, order=1, job="41", detail="x")
    assert fold(kit.lines).order(1).outcome is OrderOutcome.NOT_SUBMITTED


def test_resolve_job_makes_a_lost_order_open() -> None:
    kit = Kit().submitting().add(LineType.RESOLVE, order=1, option="job", job="j5", counts_at_limit=False, final=False)
    order = fold(kit.lines).order(1)
    assert (order.state, order.job, order.resolution) == (OrderState.OPEN, "j5", "job")


def test_stops_are_kept_with_the_last_stop_of_each_order() -> None:
    view = fold(Kit().submitting().submitted().stop("status_error").stop("wait").lines)
    assert view.order(1).last_stop == "wait"
    assert [s.reason for s in view.stops] == ["status_error", "wait"]


def test_a_record_must_begin_with_a_start_line() -> None:
    lines = Kit().submitting().lines[1:]
    with pytest.raises(RecordError, match="start line"):
        fold(lines)


def test_a_line_naming_an_order_the_start_line_lacks_is_refused() -> None:
    with pytest.raises(RecordError, match="order 3"):
        fold(Kit().submitting(3).lines)


def test_a_second_start_line_a_resume_changes_no_order() -> None:
    kit = Kit().submitting().submitted()
    kit.lines.append(kit.lines[0])
    assert fold(kit.lines).order(1).state is OrderState.OPEN
