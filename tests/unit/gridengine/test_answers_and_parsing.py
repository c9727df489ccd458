"""What Grid Engine prints, read without a cluster: qsub's answers (created, refused, unknown), the needs in
qsub's words, qstat's XML and states, qacct's records (texts measured on SGE 8.1.9, ../shared/notes/gridengine.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.gridengine import qacct, qstat, qsub
from dunscaith.adapters.scheduler.gridengine.scheduler import _task_range
from dunscaith.domain.model.jobs.objects import CreateOutcome, ObjectState
from dunscaith.domain.model.jobs.resources import Resources

_UNREACHABLE = (
    "error: commlib error: got select error (Connection refused)\nUnable to run job: unable to send "
    'message to qmaster using port 6444 on host "vm": got send error\nExiting.\n'
)


@pytest.mark.parametrize(
    ("rc", "stdout", "stderr", "outcome"),
    [
        (0, "12\n", "", CreateOutcome.CREATED),
        (0, "5.1-5:1\n", "", CreateOutcome.CREATED),  # -terse of an array
        (1, "", _UNREACHABLE, CreateOutcome.UNKNOWN),  # refused and unreachable share rc 1: the text decides
        (
            1,
            "",
            'Unable to run job: unable to send message to qmaster using port 6444 on host "vm"\nExiting.\n',
            CreateOutcome.UNKNOWN,
        ),  # a hung qmaster, after 122 s
        (1, "", "Unable to run job: Error reading answer list from qmaster\nExiting.\n", CreateOutcome.UNKNOWN),
        (
            1,
            "",
            'Unable to run job: Job was rejected because job requests unknown queue "nosuch.q".\nExiting.\n',
            CreateOutcome.REFUSED,
        ),
        (
            1,
            "",
            'Unable to run job: job rejected: the requested parallel environment "nosuch" does not exist.\nExiting.\n',
            CreateOutcome.REFUSED,
        ),
        (1, "", 'Unable to run job: unknown resource "nosuch".\nExiting.\n', CreateOutcome.REFUSED),
        (1, "", "Unable to run job: error: no suitable queues.\nExiting.\n", CreateOutcome.REFUSED),
        (2, "", 'qsub: invalid option argument "-badopt"\n', CreateOutcome.REFUSED),
        (1, "", "something never seen\n", CreateOutcome.UNKNOWN),
        (0, "", "", CreateOutcome.UNKNOWN),  # exit 0 without an id proves nothing
        (-9, "", "", CreateOutcome.UNKNOWN),  # killed: the job may exist
    ],
)
def test_each_qsub_answer_is_classified_once(rc: int, stdout: str, stderr: str, outcome: CreateOutcome) -> None:
    answer = qsub.classify(rc, stdout, stderr)
    assert answer.outcome is outcome, answer
    assert (answer.object_id is not None) == (outcome is CreateOutcome.CREATED)


def test_a_timeout_is_unknown_and_a_qsub_that_cannot_start_sent_nothing() -> None:
    assert qsub.classify(None, "", "", timed_out=True).outcome is CreateOutcome.UNKNOWN
    assert qsub.classify(None, "", "", spawn_error="no such file").outcome is CreateOutcome.REFUSED


def test_needs_become_grid_engine_words_memory_per_slot() -> None:
    needs = Resources(cpus=4, memory_mb=1000, time_limit_s=3600, queue="long.q", account="proj", export="ALL")
    assert qsub.needs_args(needs, "smp") == [
        "-q",
        "long.q",
        "-pe",
        "smp",
        "4",
        "-l",
        "h_rt=3600",
        "-l",
        "h_vmem=250M",
        "-P",
        "proj",
        "-V",
    ]
    assert qsub.needs_refusal(Resources(gpus=1), "smp") is not None
    assert qsub.needs_refusal(Resources(qos="high"), "smp") is not None
    assert qsub.needs_refusal(Resources(cpus=2), None) is not None
    assert qsub.needs_refusal(Resources(cpus=2, memory_mb=10), "smp") is None


@pytest.mark.parametrize("option", ["-h", "-N", "-ac", "-t", "-tc", "-sync", "-terse", "-w", "-cwd"])
def test_the_options_dunscaith_owns_are_refused(option: str) -> None:
    with pytest.raises(qsub.SpecRefused, match=option):
        qsub.check_options(["-l", "mem=1G", option, "x"])


def test_a_script_runs_with_its_own_interpreter() -> None:
    from dunscaith.domain.model.jobs.ids import JobId, Nonce
    from dunscaith.domain.model.jobs.objects import ObjectSpec

    bash = ObjectSpec(JobId("a"), Nonce("n"), script="#!/bin/bash\necho hi\n")
    assert qsub.script_for(bash) == ("#!/bin/bash\necho hi\n", "/bin/bash")
    env = ObjectSpec(JobId("a"), Nonce("n"), script="#!/usr/bin/env python3\nprint(1)\n")
    script, shell = qsub.script_for(env)
    assert shell == "/bin/sh" and "#!/usr/bin/env python3\nprint(1)" in script


def test_a_signal_before_the_time_limit_is_refused_before_qsub_runs(tmp_path: Path) -> None:
    """SGE 8.1.9's s_rt sends SIGUSR1 but then never enforces h_rt on a job that trapped it (measured): no
    mapping keeps the limit, so the spec is refused; a sweep's array carries the signal to the same refusal."""
    from dunscaith.adapters.scheduler.gridengine.config import GridEngineConfig
    from dunscaith.adapters.scheduler.gridengine.scheduler import GridEngineScheduler
    from dunscaith.domain.model.jobs.ids import JobId, Nonce
    from dunscaith.domain.model.jobs.objects import ObjectSpec
    from dunscaith.domain.model.jobs.recovery_settings import Signal, SignalBefore

    needs = Resources(time_limit_s=60)
    signal = SignalBefore(Signal.USR1, 10)
    spec = ObjectSpec(JobId("ckpt"), Nonce("n"), command=("true",), resources=needs, signal_before=signal)
    with pytest.raises(qsub.SpecRefused, match="--signal-before"):
        qsub.qsub_args(spec, "/bin/sh", "smp")
    # no qsub on this path: an answer other than the refusal would mean it ran
    scheduler = GridEngineScheduler(
        GridEngineConfig(name="c", bin_dir=tmp_path / "no-bin", ledger_dir=tmp_path / "ledger")
    )
    answer = scheduler.create_held(spec)
    assert answer.outcome is CreateOutcome.REFUSED and "--signal-before" in answer.detail
    element = ObjectSpec(JobId("sw-1"), Nonce("n"), command=("true",), resources=needs, signal_before=signal)
    array = scheduler.create_array_held(JobId("sw"), [(1, element)], None)
    assert array.outcome is CreateOutcome.REFUSED and "--signal-before" in array.detail
    assert not (tmp_path / "ledger").exists() or not any((tmp_path / "ledger").iterdir())


_LIST = """<?xml version='1.0'?>
<job_info  xmlns:xsd="x">
  <queue_info>
    <job_list state="running"><JB_job_number>3</JB_job_number><JB_name>arr</JB_name><JB_owner>ana</JB_owner>
      <state>r</state><JAT_start_time>2026-12-07T12:21:42</JAT_start_time><tasks>3</tasks></job_list>
  </queue_info>
  <job_info>
    <job_list state="pending"><JB_job_number>3</JB_job_number><JB_name>arr</JB_name><JB_owner>ana</JB_owner>
      <state>hqw</state><JB_submission_time>2026-12-07T12:21:40</JB_submission_time><tasks>1,4-8:2</tasks>
    </job_list>
    <job_list state="zombie"><JB_job_number>1</JB_job_number><JB_name>t1</JB_name><JB_owner>ana</JB_owner>
      <state>z</state><JB_submission_time>2026-12-07T12:19:50</JB_submission_time></job_list>
  </job_info>
</job_info>"""


def test_the_list_gives_each_array_task_and_zombies() -> None:
    rows = qstat.parse_list(_LIST)
    assert [(r.job_id, r.state, r.task_ids(), r.zombie) for r in rows] == [
        ("3", "r", [3], False),
        ("3", "hqw", [1, 4, 6, 8], False),
        ("1", "z", [], True),
    ]


@pytest.mark.parametrize(
    ("letters", "state", "started"),
    [
        ("hqw", ObjectState.HELD, False),
        ("qw", ObjectState.PENDING, False),
        ("r", ObjectState.RUNNING, True),
        ("t", ObjectState.RUNNING, True),
        ("hr", ObjectState.RUNNING, True),
        ("dr", ObjectState.STOPPING, True),
        ("Rq", ObjectState.PENDING, True),
        ("Eqw", ObjectState.PENDING, False),
        ("s", ObjectState.RUNNING, True),
    ],
)
def test_qstat_states(letters: str, state: ObjectState, started: bool) -> None:
    assert qstat.object_state(letters)[:2] == (state, started)


_DETAIL = """<?xml version='1.0'?>
<detailed_job_info  xmlns:xsd="x"><djob_info><element>
  <JB_job_number>4</JB_job_number><JB_submission_time>1796646120</JB_submission_time><JB_owner>ana</JB_owner>
  <JB_job_name>run1</JB_job_name>
  <JB_env_list><job_sublist><VA_variable>dunscaith_nonce</VA_variable><VA_value>not-this</VA_value></job_sublist>
  </JB_env_list>
  <JB_ja_tasks><ulong_sublist><JAT_task_number>1</JAT_task_number><JAT_start_time>1796646121</JAT_start_time>
  </ulong_sublist></JB_ja_tasks>
  <JB_context><context_list><VA_variable>dunscaith_nonce</VA_variable><VA_value>r1</VA_value></context_list>
  </JB_context><JB_cwd>/tmp/w</JB_cwd>
</element></djob_info>
<messages><element><SME_global_message_list><element><MES_message>x</MES_message></element>
</SME_global_message_list></element></messages></detailed_job_info>"""


def test_the_nonce_is_read_from_the_context_never_the_environment() -> None:
    details, unknown = qstat.parse_details(_DETAIL)
    detail = details["4"]
    assert (detail.nonce, detail.submitted, detail.starts, detail.cwd) == ("r1", 1796646120, {1: 1796646121}, "/tmp/w")
    assert unknown == []


_RECORD = """==============================================================
qname        all.q
jobname      t1
jobnumber    7
taskid       undefined
owner        ana
qsub_time    Mon Dec  7 12:19:50 2026
start_time   {start}
end_time     Mon Dec  7 12:20:04 2026
failed       {failed}
exit_status  {status}
category     -l h_rt=5
"""


@pytest.mark.parametrize(
    ("start", "failed", "status", "outcome"),
    [
        ("Mon Dec  7 12:20:04 2026", "0", "0", (ObjectState.COMPLETED, 0, None)),
        ("Mon Dec  7 12:20:04 2026", "0", "3", (ObjectState.FAILED, 3, None)),
        ("Mon Dec  7 12:20:04 2026", "100 : assumedly after job", "137", (ObjectState.CANCELLED, 137, 9)),
        (
            "Mon Dec  7 12:20:04 2026",
            "37  : qmaster enforced h_rt, h_cpu, or h_vmem limit",
            "137",
            (ObjectState.TIMEOUT, 137, 9),
        ),
        ("Mon Dec  7 12:20:04 2026", "19  : before writing exit_status", "0", (ObjectState.NODE_FAIL, None, None)),
        ("-/-", "26  : opening input/output file", "0", (ObjectState.FAILED, None, None)),
    ],
)
def test_accounting_records_say_how_a_job_ended(
    start: str, failed: str, status: str, outcome: tuple[ObjectState, int | None, int | None]
) -> None:
    [record] = qacct.parse(_RECORD.format(start=start, failed=failed, status=status))
    assert qacct.outcome(record)[:3] == outcome
    assert (record.started is None) == (start == "-/-")


@pytest.mark.parametrize(
    ("indices", "spec"), [([1, 2, 3], "1-3:1"), ([5], "5-5:1"), ([2, 4, 6], "2-6:2"), ([1, 2, 4], None), ([0, 1], None)]
)
def test_an_array_is_one_range_from_1(indices: list[int], spec: str | None) -> None:
    assert _task_range(indices) == spec
