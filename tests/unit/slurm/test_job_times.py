"""Slurm's own times of a job (``status``): sacct's and scontrol's fields read, a start never invented."""

from __future__ import annotations

from datetime import datetime

from dunscaith.adapters.scheduler.slurm import job_times


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone()


def test_sacct_rows_give_submit_start_and_end_and_a_job_cancelled_while_pending_has_no_start() -> None:
    out = ("12|2026-12-02T05:00:00|2026-12-02T05:00:02|2026-12-02T05:00:09|COMPLETED|node1\n"
           "13|2026-12-02T05:01:00|None|2026-12-02T05:02:00|CANCELLED by 0|None assigned\n"
           "14|2026-12-02T05:03:00|2026-12-02T05:03:00|2026-12-02T05:03:00|CANCELLED by 0|None assigned\n"
           "15|2026-12-02T05:04:00|2026-12-02T05:04:01|Unknown|RUNNING|node1\n"
           "99|2026-12-02T05:04:00|Unknown|Unknown|PENDING|None assigned\n"
           "not a row\n")
    found = job_times.parse_sacct(out, ["12", "13", "14", "15"])

    assert set(found) == {"12", "13", "14", "15"}  # 99 was not asked for
    assert (found["12"].submitted, found["12"].started, found["12"].ended) == (
        _at("2026-12-02T05:00:00"), _at("2026-12-02T05:00:02"), _at("2026-12-02T05:00:09"))
    assert found["13"].started is None and found["13"].ended == _at("2026-12-02T05:02:00")
    assert found["14"].started is None  # the end's time in the Start field: no nodes, no start
    assert found["15"].started == _at("2026-12-02T05:04:01") and found["15"].ended is None
    assert {t.source for t in found.values()} == {"sacct"}


def test_scontrol_estimates_are_not_taken_for_times() -> None:
    pending = job_times.from_scontrol({"JobId": "20", "JobState": "PENDING", "SubmitTime": "2026-12-02T05:00:00",
                                       "StartTime": "2026-12-02T06:00:00", "EndTime": "2026-12-02T07:00:00",
                                       "NodeList": "(null)"})
    running = job_times.from_scontrol({"JobId": "21", "JobState": "RUNNING", "SubmitTime": "2026-12-02T05:00:00",
                                       "StartTime": "2026-12-02T05:00:03", "EndTime": "2026-12-02T06:00:03",
                                       "NodeList": "node1"})
    assert pending is not None and pending.started is None and pending.ended is None
    assert running is not None and running.started == _at("2026-12-02T05:00:03") and running.ended is None
    assert job_times.from_scontrol({"Unrelated": "x"}) is None


def test_slurm_time_reads_no_time_as_none() -> None:
    assert [job_times.slurm_time(t) for t in ("Unknown", "None", "N/A", "", "garbage")] == [None] * 5
    assert job_times.sacct_args(["1", "2"], "c1") == [
        "-X", "--parsable2", "--noheader", "--format=JobID,Submit,Start,End,State,NodeList", "--jobs=1,2",
        "--clusters=c1"]
