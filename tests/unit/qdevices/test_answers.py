"""The seed's table "The answer to a job request", one test per row, and the reads in the wait."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.qdevices.answers import (
    JobAnswer,
    ReadKind,
    classify_job_answer,
    classify_read,
    job_id_url_safe,
)
from dunscaith.domain.model.qdevices.sites import TRAITS, SiteName

MQSS = TRAITS[SiteName.MQSS].refusal_statuses


@pytest.mark.parametrize("status", [401, 403])
def test_row_refusal_no_job_ran(status: int) -> None:
    assert classify_job_answer(status, MQSS, False) is JobAnswer.REFUSED


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_row_other_a_redirect_is_unknown(status: int) -> None:
    assert classify_job_answer(status, MQSS, False) is JobAnswer.UNKNOWN


@pytest.mark.parametrize("status", [500, 502, 503, 504, 599])
def test_row_other_500_or_more_is_unknown(status: int) -> None:
    assert classify_job_answer(status, MQSS, False) is JobAnswer.UNKNOWN


@pytest.mark.parametrize("status", [400, 404, 409, 413, 429])
def test_row_other_a_4xx_that_is_not_a_refusal_at_that_site_is_unknown(status: int) -> None:
    assert classify_job_answer(status, MQSS, False) is JobAnswer.UNKNOWN


def test_row_other_no_answer_is_unknown() -> None:
    assert classify_job_answer(None, MQSS, False) is JobAnswer.UNKNOWN


def test_row_other_a_success_with_no_job_id_is_unknown() -> None:
    assert classify_job_answer(200, MQSS, False) is JobAnswer.UNKNOWN


def test_a_success_with_a_job_id_is_ok() -> None:
    assert classify_job_answer(201, MQSS, True) is JobAnswer.OK


def test_refusals_are_per_site_vlq_413_is_one_mqss_413_is_not() -> None:
    assert classify_job_answer(413, TRAITS[SiteName.VLQ].refusal_statuses, False) is JobAnswer.REFUSED
    assert classify_job_answer(413, MQSS, False) is JobAnswer.UNKNOWN


@pytest.mark.parametrize(("status", "well_formed", "expected"), [
    (None, False, ReadKind.MISSED),
    (500, False, ReadKind.MISSED),
    (503, False, ReadKind.MISSED),
    (200, True, ReadKind.GOOD),
    (200, False, ReadKind.ENDS),
    (404, False, ReadKind.ENDS),
    (401, False, ReadKind.ENDS),
    (302, False, ReadKind.ENDS),
])
def test_a_failed_read_is_a_missed_poll_and_a_bad_answer_ends_the_wait(status: int | None, well_formed: bool,
                                                                      expected: ReadKind) -> None:
    assert classify_read(status, well_formed) is expected


def test_piastq_too_many_connections_is_a_missed_poll() -> None:
    assert classify_read(429, False, frozenset({429})) is ReadKind.MISSED


@pytest.mark.parametrize(("job", "safe"), [("abc-123", True), ("a\nb", False), ("a\rb", False), ("", False),
                                          (" x", False), ("x/y", True)])
def test_job_id_that_no_url_can_hold(job: str, safe: bool) -> None:
    assert job_id_url_safe(job) is safe
