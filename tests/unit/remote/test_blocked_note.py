"""The wrapper's note in its lock file (issue 22 item 2): fixed room, decoded leniently, said plainly."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dunscaith.domain.model.jobs.ids import Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.policy import Policy, judge_end
from dunscaith.domain.model.jobs.state import Attempt, AttemptState, JobOutcome, OutcomeKind
from dunscaith.domain.model.remote.control import NOTE_BYTES, Blocked, decode_note, encode_note
from dunscaith.domain.model.remote.state import blocked_text

AT = datetime(2026, 12, 1, 23, 39, 2, tzinfo=UTC)
FULL = Blocked("outcome.json", 28, "No space left on device", AT, exit_code=0)


def test_a_note_fills_its_room_exactly_and_reads_back() -> None:
    data = encode_note(FULL)
    assert len(data) == NOTE_BYTES and len(encode_note(None)) == NOTE_BYTES
    assert decode_note(data) == FULL
    assert decode_note(encode_note(None)) is None
    assert decode_note(b"") is None  # a lock file of an older wrapper: no room, no note


def test_a_huge_reason_is_cut_so_the_note_still_fits() -> None:
    data = encode_note(Blocked("outcome.json", 5, "x" * 2000, AT))
    assert len(data) == NOTE_BYTES and decode_note(data) is not None


@pytest.mark.parametrize("data", [b"{", b'{"format":"dunscaith.remote.blocked/1"}', b"\xff\xfe", b'["x"]'])
def test_a_note_that_does_not_read_is_no_note(data: bytes) -> None:
    assert decode_note(data.ljust(NOTE_BYTES, b" ")) is None


def test_live_a_full_disk_says_disk_full_and_how_the_worker_ended() -> None:
    assert blocked_text(FULL, True) == (
        "disk full: the worker ended with exit code 0; its outcome is kept by the process owner, which writes "
        "outcome.json as soon as it can (No space left on device, since 2026-12-01 23:39:02 UTC)")


def test_dead_the_outcome_is_not_known_with_the_cause() -> None:
    assert blocked_text(FULL, False) == (
        "disk full: the outcome is not known: the process owner could not write outcome.json (No space left on "
        "device, since 2026-12-01 23:39:02 UTC) and ended before it could; the worker ended with exit code 0, "
        "as the owner noted")


def test_another_error_is_not_called_disk_full() -> None:
    assert blocked_text(Blocked("terminated.json", 13, "Permission denied", AT), True).startswith(
        "a control file cannot be written: terminated.json is kept by the process owner")


def test_an_unknown_end_is_escalated_with_its_reason_never_tried_again() -> None:
    ended = Attempt(1, Nonce("n"), AttemptState.RELEASED, ObjectId("o"), ObjectState.UNKNOWN,
                    reason="disk full: the outcome is not known")
    verdict = judge_end(ended, 1, 3, Policy())
    assert isinstance(verdict, JobOutcome) and verdict.kind is OutcomeKind.ESCALATED
    assert verdict.detail == "attempt 1: disk full: the outcome is not known; check its output, and decide"

