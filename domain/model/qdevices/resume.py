"""The seed's resume table for a VLQ job that has no "submitted" line.

A resume never submits such a job. It reads the job's state and decides from the record.
"""

from __future__ import annotations

from enum import StrEnum


class SeenState(StrEnum):
    PAST_CONFIGURING = "past_configuring"
    UNREADABLE = "unreadable"
    CONFIGURING = "configuring"


class ResumeAction(StrEnum):
    COLLECT = "collect"  # wait for it like any open job
    STAYS_OPEN = "stays_open"  # the state cannot be read: exit 1
    NOT_SUBMITTED = "not_submitted"  # SubmitJob was never sent: final, no device time
    SUBMIT_UNKNOWN = "submit_unknown"  # SubmitJob may have reached the site: stop submit_unknown, exit 1


def resume_unsubmitted(seen: SeenState, created_line: bool, uploaded_line: bool) -> ResumeAction:
    if seen is SeenState.PAST_CONFIGURING:
        return ResumeAction.COLLECT
    if seen is SeenState.UNREADABLE:
        return ResumeAction.STAYS_OPEN
    if created_line and not uploaded_line:
        return ResumeAction.NOT_SUBMITTED
    return ResumeAction.SUBMIT_UNKNOWN  # "uploaded" written just before SubmitJob, or no "created" line
