"""The pointer as a value: its one encoding, what counts as damaged, its name, and the write throttle."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import (
    BadPointerName,
    DamagedPointer,
    Pointer,
    decode_pointer,
    encode_pointer,
    pointer_file_name,
    supervised_at_due,
)
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.services.jobs.pointer_survey import PointedJob, PointedSweep, by_sweep

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
POINTER = Pointer(
    job=JobId("analysis-1"),
    host="login1",
    record_root="/var/tmp/dunscaith-ada",
    root_host=HostIdentity(machine_id="a" * 32, hostname="login1"),
    binary="/home/ada/.venv/bin/dunscaith",
    cluster="local",
    adapter="local",
    state="running",
    state_at=T0,
    supervised_at=None,
)


def _fields(**changes: object) -> str:
    fields = json.loads(encode_pointer(POINTER))
    fields.update(changes)
    return json.dumps(fields)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "not JSON"),
        ('{"version": 1', "not JSON"),
        ("[]", "expected a JSON object"),
        (_fields(version=2), "version 2"),
        (_fields(job="other"), "names job other"),
        (_fields(binary="dunscaith"), "binary is not an absolute path"),
        (_fields(record_root="var/tmp"), "record_root is not an absolute path"),
        (_fields(state_at="yesterday"), "state_at is not a time"),
        (_fields(state_at="2026-01-01T12:00:00"), "state_at has no time zone"),
        (_fields(extra=1), "unexpected field(s) extra"),
        (json.dumps({k: v for k, v in json.loads(encode_pointer(POINTER)).items() if k != "host"}), "missing"),
        (_fields(supervised_at=5), "wrong type"),
        (_fields(sweep=7), "field sweep has the wrong type"),
        (b"\xff\xfe", "not JSON"),
    ],
)
def test_a_damaged_pointer_is_reported_with_its_job_and_why(text: str | bytes, why: str) -> None:
    with pytest.raises(DamagedPointer) as caught:
        decode_pointer("analysis-1", text)
    assert "analysis-1" in str(caught.value) and why in str(caught.value)


def test_a_pointer_reads_back_as_written() -> None:
    assert decode_pointer("analysis-1", encode_pointer(POINTER)) == POINTER
    supervised = POINTER.with_state("held", T0 + timedelta(seconds=5)).with_supervised(T0 + timedelta(minutes=5))
    again = decode_pointer("analysis-1", encode_pointer(supervised))
    assert again == supervised and again.state == "held" and again.supervised_at == T0 + timedelta(minutes=5)


def test_a_pointer_to_a_shared_store_names_its_location_and_reads_back() -> None:
    """With a PostgreSQL store the record root is the store's location, not a path: not damage."""
    shared = Pointer(**{**{f: getattr(POINTER, f) for f in POINTER.__slots__},
                        "record_root": "postgresql://ada@db.hpc.example.org:5432/dunscaith_ada"})
    assert decode_pointer("analysis-1", encode_pointer(shared)) == shared
    for bad in ("postgresql://", "postgresql://ada@db /x", "://db/x"):
        with pytest.raises(DamagedPointer, match="record_root is not an absolute path"):
            decode_pointer("analysis-1", _fields(record_root=bad))


def test_a_pointer_is_one_line_of_canonical_json() -> None:
    data = encode_pointer(POINTER)
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert encode_pointer(decode_pointer("analysis-1", data)) == data


@pytest.mark.parametrize(
    ("name", "why"),
    [("", "empty"), ("a/b", "'/'"), ("../x", "'/'"), (".hidden", "starts with '.'"), ("..", "starts with '.'"),
     ("a\0b", "NUL"), ("x" * 256, "longer than 255")],
)
def test_a_job_name_that_cannot_be_a_file_name_is_refused(name: str, why: str) -> None:
    with pytest.raises(BadPointerName, match=why):
        pointer_file_name(name)


def test_an_ordinary_job_name_is_its_own_file_name() -> None:
    assert pointer_file_name("analysis-1.v2_b") == "analysis-1.v2_b"


POLL = timedelta(seconds=30)


@pytest.mark.parametrize(
    ("last", "now", "due"),
    [
        (None, T0, True),
        (T0, T0, False),
        (T0, T0 + 9 * POLL, False),
        (T0, T0 + 10 * POLL - timedelta(microseconds=1), False),
        (T0, T0 + 10 * POLL, True),
        (T0, T0 + 25 * POLL, True),
        (T0, T0 - timedelta(seconds=1), True),  # the clock went back: write rather than stay silent
    ],
)
def test_supervised_at_is_written_at_most_once_every_ten_poll_intervals(last: datetime | None, now: datetime,
                                                                        due: bool) -> None:
    assert supervised_at_due(last, now, POLL) is due


def test_over_an_hour_of_thirty_second_polls_supervised_at_is_written_twelve_times() -> None:
    last, writes = None, 0
    for loop in range(120):
        now = T0 + loop * POLL
        if supervised_at_due(last, now, POLL):
            last, writes = now, writes + 1
    assert writes == 12


def test_an_elements_pointer_names_its_sweep_and_a_jobs_has_no_such_field() -> None:
    element = replace(POINTER, job=JobId("exp-7"), sweep=JobId("exp"))
    assert decode_pointer("exp-7", encode_pointer(element)) == element
    assert json.loads(encode_pointer(element))["sweep"] == "exp"
    # a job of its own: the very fields every earlier build writes and reads
    assert "sweep" not in json.loads(encode_pointer(POINTER))


def test_another_hosts_elements_make_one_row_per_sweep_where_the_first_was() -> None:
    def pointed(job: str, sweep: str | None, state: str, host: str = "login1") -> PointedJob:
        return PointedJob(replace(POINTER, job=JobId(job), sweep=JobId(sweep) if sweep else None, state=state,
                                  host=host), unattended=False)
    jobs = [pointed("a", None, "running"), pointed("exp-1", "exp", "running"), pointed("b", None, "held"),
            pointed("exp-2", "exp", "succeeded"), pointed("exp-3", "exp", "running"),
            pointed("exp-4", "exp", "running", host="login2")]
    rows = by_sweep(jobs)
    assert [r.pointer.job if isinstance(r, PointedJob) else (r.sweep, r.host) for r in rows] == [
        "a", ("exp", "login1"), "b", ("exp", "login2")]
    first = rows[1]
    assert isinstance(first, PointedSweep)
    assert [e.pointer.job for e in first.elements] == ["exp-1", "exp-2", "exp-3"]
