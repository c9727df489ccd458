"""Reading squeue, scontrol and sacct answers (formats as Slurm 22.05 prints them)."""

from __future__ import annotations

import pytest

from dunscaith.adapters.scheduler.slurm import sacct, scontrol, squeue
from dunscaith.adapters.scheduler.slurm.states import UnknownState, ended_exit_code, object_state, parse_exit_code
from dunscaith.domain.model.jobs.objects import ObjectState

RS, US = squeue.RS, squeue.US


def record(job_id: str, name: str, state: str, reason: str = "None", user: str = "u", host: str = "n/a",
           end: str = "N/A", comment: str = "x", restarts: str = "0", task: str = "N/A") -> str:
    return US.join((job_id, name, state, reason, user, restarts, host, end, task, comment)) + RS + "\n"


def test_squeue_rows_keep_a_comment_with_separators_and_newlines() -> None:
    out = record("12", "job-a", "PENDING", "JobHeldUser", "alice", "n/a", "N/A", "n-1") + record(
        "13", "job-a", "RUNNING", "None", "bob", "vm", "2026-11-30T04:13:38", "free|text\nwith a newline"
    )
    rows = squeue.parse(out)
    assert [r.job_id for r in rows] == ["12", "13"]
    assert rows[0].comment == "n-1" and not rows[0].started
    assert rows[1].comment == "free|text\nwith a newline" and rows[1].started


def test_squeue_empty_answer_is_no_rows() -> None:
    assert squeue.parse("") == []


def test_a_requeued_job_without_a_batch_host_has_started() -> None:
    [row] = squeue.parse(record("5", "a", "PENDING", "BeginTime", restarts="1"))
    assert row.started


def test_squeue_cluster_headers_are_skipped() -> None:
    out = "CLUSTER: one\n" + record("1", "a", "PENDING", "None", "u", "n/a", "N/A", "x")
    assert [r.job_id for r in squeue.parse(out)] == ["1"]


@pytest.mark.parametrize(
    "out",
    [
        "slurm_load_jobs error: Socket timed out on send/recv operation\n",
        "1" + US + "a" + US + "PENDING" + RS + "\n",  # truncated record
        record("1", "a", "WEIRD_STATE", "None", "u", "n/a", "N/A", "x"),
        record("", "a", "PENDING", "None", "u", "n/a", "N/A", "x"),
    ],
)
def test_squeue_output_we_do_not_understand_is_refused_not_guessed(out: str) -> None:
    with pytest.raises((squeue.SqueueParseError, UnknownState)):
        squeue.parse(out)


def test_squeue_args_ask_once_for_all_names_in_all_states() -> None:
    args = squeue.squeue_args(["a", "b", "c"], "c1")
    assert "--states=all" in args and "--noheader" in args and "--name=a,b,c" in args
    assert "--clusters=c1" in args


@pytest.mark.parametrize(
    ("state", "reason", "expected"),
    [
        ("PENDING", "JobHeldUser", ObjectState.HELD),
        ("PENDING", "JobHeldAdmin", ObjectState.HELD),
        ("PENDING", "job requeued in held state", ObjectState.HELD),
        ("PENDING", "BeginTime", ObjectState.PENDING),
        ("PENDING", "None", ObjectState.PENDING),
        ("RUNNING", "None", ObjectState.RUNNING),
        ("COMPLETING", "None", ObjectState.STOPPING),
        ("COMPLETED", "None", ObjectState.COMPLETED),
        ("FAILED", "NonZeroExitCode", ObjectState.FAILED),
        ("CANCELLED", "JobHeldUser", ObjectState.CANCELLED),  # the reason keeps its old value
        ("CANCELLED by 0", "", ObjectState.CANCELLED),
        ("TIMEOUT", "TimeLimit", ObjectState.TIMEOUT),
        ("NODE_FAIL", "None", ObjectState.NODE_FAIL),
        ("PREEMPTED", "None", ObjectState.PREEMPTED),
        ("BOOT_FAIL", "None", ObjectState.BOOT_FAIL),
        ("OUT_OF_MEMORY", "None", ObjectState.OUT_OF_MEMORY),
        ("REQUEUED", "None", ObjectState.REQUEUED),
    ],
)
def test_states(state: str, reason: str, expected: ObjectState) -> None:
    assert object_state(state, reason) is expected


@pytest.mark.parametrize(("text", "expected"), [("3:0", (3, None)), ("0:15", (None, 15)), ("0:0", (0, None)),
                                                ("", (None, None)), ("x:1", (None, None))])
def test_exit_codes(text: str, expected: tuple[int | None, int | None]) -> None:
    assert parse_exit_code(text) == expected


def test_scontrol_config() -> None:
    out = "Configuration data as of 2026-11-30T04:13:52\nMessageTimeout          = 10 sec\n" \
          "AccountingStorageType   = accounting_storage/slurmdbd\nMinJobAge = 300 sec\n"
    config = scontrol.parse_config(out)
    assert scontrol.message_timeout(config) == 10.0
    assert scontrol.accounting_enabled(config)
    assert not scontrol.accounting_enabled({"AccountingStorageType": "accounting_storage/none"})
    assert scontrol.message_timeout({}) is None


def test_scontrol_one_line_per_job() -> None:
    out = ("JobId=6 JobName=FAIL UserId=root(0) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) "
           "Requeue=1 Restarts=2 BatchFlag=1 Reboot=0 ExitCode=3:0 Comment=a b\n"
           "JobId=7 JobName=X JobState=TIMEOUT ExitCode=0:15\n")
    details = scontrol.parse_jobs(out)
    assert details["6"].exit_code == "3:0" and details["6"].restarts == 2
    assert details["7"].exit_code == "0:15"


def test_sacct_rows_exact_names_only_and_comment_with_pipes() -> None:
    out = ("1|P1|FAILED|3:0|root|vm|nonce-1\n"
           "2|p1|COMPLETED|0:0|root|vm|other-case\n"  # --name matches case-insensitively
           "3|P3|CANCELLED by 0|0:0|root|None assigned|n|3\n")
    rows = sacct.parse(out, ["P1", "P3"])
    assert [(r.job_id, r.comment, r.started) for r in rows] == [("1", "nonce-1", True), ("3", "n|3", False)]


def test_sacct_args_query_by_end_state_with_an_end_time() -> None:
    args = sacct.sacct_args(["a", "b"], 3600, None)
    assert "--name=a,b" in args and "--endtime=now" in args and "--starttime=now-3600" in args
    assert any(a.startswith("--state=") for a in args) and "-X" in args


def test_sacct_garbage_is_refused() -> None:
    with pytest.raises(sacct.SacctParseError):
        sacct.parse("sacct: error: Problem talking to the database\n", ["a"])


@pytest.mark.parametrize(("state", "text", "expected"), [
    (ObjectState.TIMEOUT, "0:0", (None, None)),  # sacct's ExitCode of a job that reached its time limit
    (ObjectState.TIMEOUT, "0:15", (None, None)),  # scontrol's, while slurmctld still knows the job
    (ObjectState.PREEMPTED, "0:15", (None, None)),
    (ObjectState.NODE_FAIL, "0:0", (None, None)),
    (ObjectState.COMPLETED, "0:0", (0, None)),
    (ObjectState.FAILED, "3:0", (3, None)),
    (ObjectState.FAILED, "0:15", (None, 15)),
])
def test_an_end_slurm_decided_or_0_0_is_no_exit_code_unless_it_completed(
        state: ObjectState, text: str, expected: tuple[int | None, int | None]) -> None:
    assert ended_exit_code(state, text) == expected


def test_a_row_memo_gives_the_same_rows_for_records_printed_again_and_reads_the_changed_ones() -> None:
    memo = squeue.RowMemo()
    first = (record("7_1", "exp", "PENDING", "Priority", task="1")
             + record("7_2", "exp", "PENDING", "Priority", task="2"))
    before = squeue.parse(first, memo)
    assert before == squeue.parse(first)  # what it reads is what parse reads
    again = squeue.parse(record("7_1", "exp", "PENDING", "Priority", task="1")
                         + record("7_2", "exp", "RUNNING", host="vm", task="2"), memo)
    assert again[0] is before[0]  # printed again unchanged: the very row
    assert again[1] is not before[1] and again[1].slurm_state == "RUNNING" and again[1].started
    assert list(memo.rows) == [record("7_1", "exp", "PENDING", "Priority", task="1")[:-2],
                               record("7_2", "exp", "RUNNING", host="vm", task="2")[:-2]]  # the last answer's only
    with pytest.raises(squeue.SqueueParseError):
        squeue.parse(first + "garbage\n", memo)
