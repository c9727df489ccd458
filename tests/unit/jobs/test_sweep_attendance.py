"""A sweep supervisor's attendance: its file's text, which elements it speaks for, and the judgement of
another login node from it (domain/model/jobs/sweep_attendance.py, attendance.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.domain.model.jobs.attendance import attendance_stale, last_seen, unattended_by_pointer
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.sweep_attendance import (
    DamagedAttendance,
    SweepAttendance,
    decode_attendance,
    element_index,
    encode_attendance,
    indices_text,
    parse_indices,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LOGIN1 = HostIdentity("a" * 32, "login1")
LOGIN2 = HostIdentity("b" * 32, "login2")
POLL = timedelta(seconds=10)  # Unattended after 2 x 10 poll intervals without a word


def element(job: str, sweep: str | None = "exp", seen: datetime | None = T0, state: str = "running") -> Pointer:
    return Pointer(job=JobId(job), host="login1", record_root="/var/tmp/r", root_host=LOGIN1, binary="/opt/d",
                   cluster="local", adapter="local", state=state, state_at=T0, supervised_at=seen,
                   sweep=None if sweep is None else JobId(sweep))


def attending(*indices: int, at: datetime = T0 + timedelta(seconds=500), root: HostIdentity = LOGIN1,
              sweep: str = "exp") -> SweepAttendance:
    return SweepAttendance(JobId(sweep), "login1-0a0b", root, at, frozenset(indices))


@pytest.mark.parametrize(("indices", "text"), [
    ((), ""), ((7,), "7"), ((1, 2, 3), "1-3"), ((1, 2, 3, 5, 7, 8), "1-3,5,7-8"), (range(0, 5000), "0-4999"),
])
def test_indices_are_written_as_runs_and_read_back(indices: tuple[int, ...], text: str) -> None:
    assert indices_text(indices) == text
    assert parse_indices(text) == frozenset(indices)


def test_an_attendance_reads_back_whole_and_a_damaged_one_is_said_so() -> None:
    written = attending(1, 2, 3, 9)
    assert decode_attendance(encode_attendance(written)) == written
    for damaged in (b"", b"[]", b'{"version": 2}', encode_attendance(written).replace(b'"1-3,9"', b'"3-1"'),
                    encode_attendance(written).replace(b'"1-3,9"', b'"x"')):
        with pytest.raises(DamagedAttendance):
            decode_attendance(damaged)


def test_an_element_is_named_by_its_sweep_and_index_only() -> None:
    assert element_index(JobId("exp-7"), JobId("exp")) == 7
    assert element_index(JobId("exp-b-7"), JobId("exp")) is None
    assert element_index(JobId("exp-"), JobId("exp")) is None
    assert element_index(JobId("expo-7"), JobId("exp")) is None


def test_an_element_is_attended_while_its_sweeps_attendance_names_it_and_is_fresh() -> None:
    now = T0 + timedelta(seconds=600)  # the elements' own supervised-at is 600 s old: Unattended by it
    assert unattended_by_pointer(element("exp-3"), now, POLL)
    fresh = [attending(1, 2, 3)]
    assert not unattended_by_pointer(element("exp-3"), now, POLL, fresh)
    assert last_seen(element("exp-3"), fresh) == T0 + timedelta(seconds=500)
    assert unattended_by_pointer(element("exp-4"), now, POLL, fresh)  # not named: not held by it
    assert unattended_by_pointer(element("exp-3"), now, POLL, [attending(3, root=LOGIN2)])  # another root's
    assert unattended_by_pointer(element("exp-3"), now, POLL, [attending(3, sweep="other")])
    assert unattended_by_pointer(element("exp-3", sweep=None), now, POLL, fresh)  # a job of its own
    stale = [attending(3, at=T0 + timedelta(seconds=300))]
    assert unattended_by_pointer(element("exp-3"), now, POLL, stale)
    assert attendance_stale(stale[0], now, POLL) and not attendance_stale(fresh[0], now, POLL)
    assert not unattended_by_pointer(element("exp-3", state="succeeded"), now, POLL)
