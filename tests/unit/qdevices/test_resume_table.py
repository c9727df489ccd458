"""The seed's resume table for a VLQ job with no "submitted" line: one test per row."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.qdevices.resume import ResumeAction, SeenState, resume_unsubmitted


@pytest.mark.parametrize(("created", "uploaded"), [(True, False), (True, True), (False, False)])
def test_row_past_configuring_any_record_is_collected(created: bool, uploaded: bool) -> None:
    assert resume_unsubmitted(SeenState.PAST_CONFIGURING, created, uploaded) is ResumeAction.COLLECT


@pytest.mark.parametrize(("created", "uploaded"), [(True, False), (True, True), (False, False)])
def test_row_cannot_be_read_any_record_stays_open(created: bool, uploaded: bool) -> None:
    assert resume_unsubmitted(SeenState.UNREADABLE, created, uploaded) is ResumeAction.STAYS_OPEN


def test_row_configuring_created_no_uploaded_is_not_submitted() -> None:
    assert resume_unsubmitted(SeenState.CONFIGURING, True, False) is ResumeAction.NOT_SUBMITTED


def test_row_configuring_uploaded_is_submit_unknown() -> None:
    assert resume_unsubmitted(SeenState.CONFIGURING, True, True) is ResumeAction.SUBMIT_UNKNOWN


def test_row_configuring_no_created_line_is_submit_unknown() -> None:
    assert resume_unsubmitted(SeenState.CONFIGURING, False, False) is ResumeAction.SUBMIT_UNKNOWN
