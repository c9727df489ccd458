"""A sweep as one Slurm job array, without a cluster: the ``--array`` list, the one batch script (run here by
``/bin/sh`` as each task would run it), the names tasks answer to, and the scheduler's calls against stubs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dunscaith.adapters.scheduler.slurm import arrays, scontrol, squeue
from dunscaith.adapters.scheduler.slurm.batch_script import SpecRefused
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import CreateOutcome, ObjectSpec, ObjectState
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.ports.scheduler import CreatesArrays
from tests.unit.slurm.test_scheduler_with_stubs import CONFIG_OUT, Stubs, sched, squeue_record
from tests.unit.slurm.test_scheduler_with_stubs import stubs as stubs  # the fixture

NONCE = Nonce("n-sweep")


def element(index: int, command: tuple[str, ...] = (), script: str | None = None) -> tuple[int, ObjectSpec]:
    return index, ObjectSpec(JobId(f"sw-{index}"), NONCE, command=command, script=script)


# ---- the --array list ----------------------------------------------------------------------------
@pytest.mark.parametrize(("indices", "text"), [
    (range(1, 501), "1-500"),
    ([1, 3, 5, 6, 7, 8, 9], "1,3,5-9"),
    ([9, 0, 3, 2, 1], "0-3,9"),
    ([7], "7"),
    ([0, 2, 4], "0,2,4"),
])
def test_indices_are_compacted_to_ranges(indices: list[int], text: str) -> None:
    assert arrays.compact_indices(list(indices)) == text
    assert arrays.expand_indices(text) == sorted(indices)


@pytest.mark.parametrize("indices", [[], [1, 1], [-1, 2]])
def test_no_index_a_repeated_or_a_negative_one_is_a_mistake(indices: list[int]) -> None:
    with pytest.raises(ValueError, match=r"index|indices"):
        arrays.compact_indices(indices)


def test_max_running_is_slurms_throttle() -> None:
    assert arrays.array_spec([1, 2, 3, 4, 5], 2) == "1-5%2"
    assert arrays.array_spec([1, 3], None) == "1,3"


def test_an_array_record_expands_to_its_tasks_and_a_task_id_splits() -> None:
    assert arrays.expand_task_ids("12_[1-3,5%2]") == ["12_1", "12_2", "12_3", "12_5"]
    assert arrays.expand_task_ids("12_[0-6:3]") == ["12_0", "12_3", "12_6"]
    assert arrays.expand_task_ids("12_4") == ["12_4"] and arrays.expand_task_ids("12") == ["12"]
    assert arrays.split_task_id("12_4") == ("12", 4) and arrays.split_task_id("12") is None


@pytest.mark.parametrize(("name", "found"), [
    ("exp-7", ("exp", 7)), ("exp-0", ("exp", 0)), ("a-b-12", ("a-b", 12)),
    ("exp", None), ("exp-", None), ("exp-07", None), ("-3", None), ("exp-x1", None),
])
def test_an_element_name_is_a_sweep_name_and_an_index(name: str, found: tuple[str, int] | None) -> None:
    assert arrays.element_of(name) == found


def test_a_task_index_is_a_number_below_slurms_no_index() -> None:
    assert [arrays.task_index(t) for t in ("3", "N/A", "1-5%2", "4294967294", "")] == [3, None, None, None, None]


# ---- the one batch script, run as each task runs it ----------------------------------------------
def run_task(script: str, index: int, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "slurm_script"
    path.write_text(script)
    path.chmod(0o755)
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": str(index)}
    return subprocess.run([str(path)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=30,
                          check=False, stdin=subprocess.DEVNULL)


def test_each_task_runs_its_own_elements_command_word_for_word(tmp_path: Path) -> None:
    script = arrays.array_script([
        element(1, ("echo", "one", "it's $HOME", "*")),
        element(2, ("sh", "-c", "echo two; exit 3")),
        element(10, ("printf", "%s|", "a b", "", "two\nlines")),
    ])
    assert script.startswith("#!/bin/sh\n")
    one, two, ten = (run_task(script, i, tmp_path) for i in (1, 2, 10))
    assert (one.stdout, one.returncode) == ("one it's $HOME *\n", 0)
    assert (two.stdout, two.returncode) == ("two\n", 3)
    assert ten.stdout == "a b||two\nlines|"
    stray = run_task(script, 4, tmp_path)
    assert stray.returncode == 127 and "no element for array task 4" in stray.stderr


def test_an_element_script_runs_by_its_own_interpreter_and_its_sbatch_lines_head_the_array(tmp_path: Path) -> None:
    shell = "#!/bin/sh\n#SBATCH --begin=now+60\n\n# a comment\necho \"shell $1 $(cat)\"\nexit 4\n"
    python = "#!/usr/bin/env python3\n#SBATCH --begin=now+60\nimport sys\nprint('python', sys.stdin.read() == '')\n"
    script = arrays.array_script([element(0, script=shell), element(1, script=python)])
    assert script.splitlines()[1] == "#SBATCH --begin=now+60"  # sbatch reads it, as it would the element's own
    zero, one = run_task(script, 0, tmp_path), run_task(script, 1, tmp_path)
    assert (zero.stdout, zero.returncode) == ("shell  \n", 4)  # no arguments, stdin as the job's (empty)
    assert (one.stdout, one.returncode) == ("python True\n", 0)


def test_a_script_holding_the_delimiter_or_shell_syntax_is_run_as_written(tmp_path: Path) -> None:
    tricky = "#!/bin/sh\ncat <<'EOF'\n$HOME `x` \\n ;; esac\nEOF\n"
    script = arrays.array_script([element(3, script=tricky), element(4, ("true",))])
    assert run_task(script, 3, tmp_path).stdout == "$HOME `x` \\n ;; esac\n"


def test_elements_with_different_sbatch_lines_cannot_share_one_array() -> None:
    with pytest.raises(SpecRefused, match="different #SBATCH"):
        arrays.array_script([element(0, script="#!/bin/sh\n#SBATCH --mem=1G\ntrue\n"), element(1, ("true",))])
    with pytest.raises(SpecRefused, match="#!"):
        arrays.array_script([element(0, script="echo no interpreter\n")])


def test_a_5000_element_script_is_far_below_slurms_4_mib(tmp_path: Path) -> None:
    """What docs/slurm.md says of the size: ~54 bytes a typical command element (268 KB for 5,000), far below
    slurmctld's default max_script_size."""
    script = arrays.array_script([element(i, ("python3", "train.py", "--seed", str(i), "--lr", "0.001"))
                                  for i in range(5000)])
    size = len(script.encode())
    assert 250_000 < size < 300_000 < scontrol.DEFAULT_MAX_SCRIPT_SIZE
    assert run_task(script, 4999, tmp_path).returncode != 127  # the last branch is reached (python may fail)


# ---- what squeue and scontrol say of tasks -------------------------------------------------------
def test_a_task_row_answers_to_its_element_name_and_a_whole_array_record_is_refused() -> None:
    [task, job] = squeue.parse(squeue_record("12_3", "sw", "PENDING", "JobHeldUser", task="3")
                               + squeue_record("13", "sw", "PENDING", "JobHeldUser"))
    assert (task.job_id, task.element(), job.element()) == ("12_3", "sw-3", "sw")
    with pytest.raises(squeue.SqueueParseError, match="whole"):
        squeue.parse(squeue_record("12_[1-5%2]", "sw", "PENDING", "JobHeldUser", task="1-5%2"))
    assert "--array" in squeue.squeue_args(["sw"], None)


def test_scontrol_keys_a_task_by_its_array_id() -> None:
    out = ("JobId=13 ArrayJobId=12 ArrayTaskId=2 JobName=sw ExitCode=3:0 Restarts=0\n"
           "JobId=12 ArrayJobId=12 ArrayTaskId=3 JobName=sw ExitCode=0:0 Restarts=0\n"
           "JobId=20 JobName=plain ExitCode=1:0 Restarts=0\n")
    details = scontrol.parse_jobs(out)
    assert sorted(details) == ["12_2", "12_3", "20"] and details["12_2"].exit_code == "3:0"


# ---- the scheduler against stubs -----------------------------------------------------------------
def test_the_slurm_scheduler_makes_arrays() -> None:
    from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig

    assert isinstance(SlurmCliScheduler(SlurmClusterConfig()), CreatesArrays)


def test_one_sbatch_makes_the_held_array(stubs: Stubs) -> None:
    stubs.set("sbatch", stdout="41\n")
    answer = sched(stubs).create_array_held(JobId("sw"), [element(i, ("echo", str(i))) for i in (1, 2, 3, 7)], 2)
    assert (answer.outcome, answer.object_id) == (CreateOutcome.CREATED, "41")
    [call] = stubs.calls("sbatch")
    assert "--array=1-3,7%2" in call and "--hold" in call and "--job-name=sw " in call
    assert "--comment=n-sweep" in call
    assert "exec echo 7" in (stubs.root / "sbatch.stdin").read_text()
    assert sched(stubs).task_object(ObjectId("41"), 7) == "41_7"


def test_a_lost_array_reply_is_unknown_never_resent(stubs: Stubs) -> None:
    stubs.set("sbatch", rc=1, stderr="sbatch: error: Batch job submission failed: Socket timed out on send/recv "
                                     "operation\n")
    answer = sched(stubs).create_array_held(JobId("sw"), [element(1, ("true",)), element(2, ("true",))], None)
    assert answer.outcome is CreateOutcome.UNKNOWN and len(stubs.calls("sbatch")) == 1


@pytest.mark.parametrize("differ", [
    {"nonce": Nonce("other")}, {"options": ("--mem=1G",)}, {"resources": Resources(cpus=2)},
    {"workdir": "/elsewhere"}, {"env": {"A": "1"}}, {"name": JobId("sw-9")},
])
def test_elements_that_differ_in_more_than_what_they_run_are_a_callers_mistake(stubs: Stubs,
                                                                              differ: dict[str, Any]) -> None:
    import dataclasses

    first, (index, second) = element(1, ("true",)), element(2, ("true",))
    with pytest.raises(ValueError, match="element 2"):
        sched(stubs).create_array_held(JobId("sw"), [first, (index, dataclasses.replace(second, **differ))], None)
    assert stubs.calls("sbatch") == []


def test_a_script_above_max_script_size_is_refused_before_anything_is_sent(stubs: Stubs) -> None:
    stubs.set("scontrol", stdout=CONFIG_OUT + "SchedulerParameters     = sched_interval=2,max_script_size=1000\n")
    answer = sched(stubs).create_array_held(JobId("sw"), [element(i, ("echo", "x" * 50)) for i in range(40)], None)
    assert answer.outcome is CreateOutcome.REFUSED and "max_script_size (1000 bytes)" in answer.detail
    assert stubs.calls("sbatch") == []


@pytest.mark.parametrize(("config", "count", "largest", "refused"), [
    ("MaxArraySize            = 1001\n", 1001, 1000, None),
    ("MaxArraySize            = 1001\n", 2, 1001, "index 1001 is above this cluster's MaxArraySize (1001"),
    ("MaxArraySize            = 0\n", 2, 1, "job arrays are turned off on this cluster (MaxArraySize = 0)"),
    ("MaxArraySize            = 1\n", 1, 0, "turned off"),
    ("", 2, 1, "gives no MaxArraySize"),
])
def test_array_refusal_reads_max_array_size(stubs: Stubs, config: str, count: int, largest: int,
                                            refused: str | None) -> None:
    stubs.set("scontrol", stdout=CONFIG_OUT + config)
    said = sched(stubs).array_refusal(count, largest)
    if refused is None:
        assert said is None
    else:
        assert said is not None and refused in said and "\n" not in said


def test_array_refusal_when_the_cluster_cannot_be_asked(stubs: Stubs) -> None:
    stubs.set("scontrol", rc=1, stderr="slurm_load_ctl_conf error: Unable to contact slurm controller\n")
    said = sched(stubs).array_refusal(3, 2)
    assert said is not None and "could not be read" in said and "Unable to contact" in said


def test_an_element_name_asks_squeue_for_its_sweep_and_maps_each_task(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=(
        squeue_record("12_1", "sw", "PENDING", "JobHeldUser", comment="n-sweep", task="1")
        + squeue_record("12_2", "sw", "RUNNING", host="vm", comment="n-sweep", task="2")
        + squeue_record("12_3", "sw", "PENDING", "JobArrayTaskLimit", comment="n-sweep", task="3")
        + squeue_record("15", "sw", "PENDING", "JobHeldUser", comment="plain")  # a job named sw itself
        + squeue_record("16", "sw-2", "PENDING", "JobHeldUser", comment="n-other")))  # a job named sw-2
    result = sched(stubs).query([JobId("sw-1"), JobId("sw-2")], confirm_absent=False)
    [call] = [c for c in stubs.log.read_text().split("\n") if c.startswith("squeue")]  # its --Format holds \x1e
    assert "--name=sw,sw-1,sw-2" in call and "--array" in call
    views = {(v.name, v.object_id): (v.state, v.nonce, v.started) for v in result.objects}
    assert views == {
        ("sw-1", "12_1"): (ObjectState.HELD, "n-sweep", False),
        ("sw-2", "12_2"): (ObjectState.RUNNING, "n-sweep", True),
        ("sw-2", "16"): (ObjectState.HELD, "n-other", False),
    }


def test_an_ended_tasks_exit_code_is_scontrols_for_its_task_id(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=squeue_record("12_2", "sw", "FAILED", "NonZeroExitCode", host="vm", end="T1",
                                             task="2"))
    stubs.set("scontrol", stdout="JobId=13 ArrayJobId=12 ArrayTaskId=2 JobName=sw JobState=FAILED ExitCode=3:0\n")
    [view] = sched(stubs, accounting=False).query([JobId("sw-2")], confirm_absent=True).objects
    assert (view.name, view.object_id, view.exit_code) == ("sw-2", "12_2", 3)
    assert [c for c in stubs.calls("scontrol") if "show job" in c] == ["scontrol -o show job 12_2"]


def test_purged_tasks_come_back_from_accounting_a_whole_record_below_a_tasks_own(stubs: Stubs) -> None:
    stubs.set("sacct", stdout=("12_2|sw|FAILED|3:0|alice|vm|n-sweep\n"
                               "12_[1-3%2]|sw|CANCELLED by 0|0:0|alice|None assigned|n-sweep\n"
                               "30|sw-4|COMPLETED|0:0|alice|vm|n-old\n"))
    result = sched(stubs).query([JobId("sw-1"), JobId("sw-2"), JobId("sw-4")], confirm_absent=True)
    [call] = stubs.calls("sacct")
    assert "--name=sw,sw-1,sw-2,sw-4" in call
    views = {(v.name, v.object_id): (v.state, v.exit_code, v.started) for v in result.objects}
    assert views == {
        ("sw-1", "12_1"): (ObjectState.CANCELLED, None, False),
        ("sw-2", "12_2"): (ObjectState.FAILED, 3, True),
        ("sw-4", "30"): (ObjectState.COMPLETED, 0, True),
    }


def test_stopping_an_element_cancels_its_task_by_id_after_splitting_it_off(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=(
        squeue_record("12_1", "sw", "PENDING", "JobHeldUser", task="1")
        + squeue_record("12_2", "sw", "PENDING", "JobHeldUser", task="2")
        + squeue_record("17", "sw-2", "RUNNING", host="vm")))
    stopped = sched(stubs).stop_by_name(JobId("sw-2"))
    assert sorted(stopped) == ["12_2", "17"]
    assert [c for c in stubs.calls("scontrol") if "uhold" in c] == ["scontrol uhold 12_2"]
    assert stubs.calls("scancel") == ["scancel --user=alice 12_2", "scancel --name=sw-2 --user=alice"]


def test_stopping_a_sweep_stops_every_task_by_its_name(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=(
        squeue_record("12_1", "sw", "PENDING", "JobHeldUser", task="1")
        + squeue_record("12_3", "sw", "PENDING", "JobHeldUser", task="3")
        + squeue_record("12_2", "sw", "RUNNING", host="vm", task="2")))
    assert sorted(sched(stubs).stop_by_name(JobId("sw"))) == ["12_1", "12_2", "12_3"]
    assert [c for c in stubs.calls("scontrol") if "uhold" in c] == ["scontrol uhold 12_1,12_3"]
    assert stubs.calls("scancel") == ["scancel --name=sw --user=alice"]


def test_cancel_if_not_started_holds_a_pending_task_first_and_releases_one_that_started(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=(squeue_record("12_1", "sw", "PENDING", "JobArrayTaskLimit", task="1")
                                + squeue_record("12_2", "sw", "PENDING", "None", task="2")))
    stubs.set("scancel", stderr="scancel: Terminating job 12_1\n")
    assert sched(stubs).cancel_if_not_started([ObjectId("12_1"), ObjectId("12_2")]) == ["12_1"]
    holds = [c for c in stubs.calls("scontrol") if "uhold" in c or "release" in c]
    assert holds == ["scontrol uhold 12_1,12_2", "scontrol release 12_2"]


def test_cancel_if_not_started_leaves_tasks_alone_when_their_state_is_not_known(stubs: Stubs) -> None:
    from dunscaith.ports.scheduler import SchedulerError

    stubs.set("squeue", rc=1, stderr="squeue: error: Socket timed out on send/recv operation\n")
    with pytest.raises(SchedulerError, match="12_1"):
        sched(stubs).cancel_if_not_started([ObjectId("12_1")])
    assert stubs.calls("scancel") == []


def test_every_tasks_output_paths_from_one_scontrol_of_the_array(stubs: Stubs) -> None:
    """As Slurm 22.05 prints them: the tasks still in the array's record share a line whose %a reads
    4294967294; ``scontrol show job 41_3`` said ``o-41-3-%4a-41-OS.txt`` for the pattern below."""
    stubs.set("scontrol", stdout=(
        "JobId=41 ArrayJobId=41 ArrayTaskId=1,3-4 JobName=OS StdErr=/w/e-4294967294.txt StdIn=/dev/null "
        "StdOut=/w/o-41-4294967294-%4a-41-OS.txt Power=\n"
        "JobId=42 ArrayJobId=41 ArrayTaskId=2 JobName=OS StdErr=/w/e-2.txt StdIn=/dev/null "
        "StdOut=/w/o-41-2-%4a-42-OS.txt Power=\n"))
    s = sched(stubs)
    paths = {i: s.output_paths(ObjectId(f"41_{i}")) for i in (1, 2, 3, 4)}
    assert {i: (p.stdout, p.stderr) for i, p in paths.items() if p is not None} == {
        1: ("/w/o-41-1-%4a-41-OS.txt", "/w/e-1.txt"), 2: ("/w/o-41-2-%4a-42-OS.txt", "/w/e-2.txt"),
        3: ("/w/o-41-3-%4a-41-OS.txt", "/w/e-3.txt"), 4: ("/w/o-41-4-%4a-41-OS.txt", "/w/e-4.txt")}
    assert stubs.calls("scontrol") == ["scontrol -o show job 41"]
    assert s.output_paths(ObjectId("41_1")) is not None  # a kept path is used once: scontrol is asked anew
    assert stubs.calls("scontrol") == ["scontrol -o show job 41"] * 2


def test_releasing_an_array_with_an_ended_task_releases_the_others_without_an_error(stubs: Stubs) -> None:
    from dunscaith.ports.scheduler import SchedulerError

    stubs.set("scontrol", rc=1, stderr="51_1,3: No error\n51_2: Job has already finished\n")
    sched(stubs).release(ObjectId("51"))
    assert [c for c in stubs.calls("scontrol") if "release" in c] == ["scontrol release 51"]
    stubs.set("scontrol", rc=1, stderr="51_1,3: No error\n51_2: Access/permission denied\n")
    with pytest.raises(SchedulerError, match="51_2: Access/permission denied"):
        sched(stubs).release(ObjectId("51"))


def test_array_refusal_when_the_elements_scripts_differ_in_their_sbatch_lines(stubs: Stubs) -> None:
    stubs.set("scontrol", stdout=CONFIG_OUT + "MaxArraySize            = 1001\n")
    same = ["#!/bin/sh\n#SBATCH --mem=1G\necho 1\n", "#!/bin/sh\n#SBATCH --mem=1G\necho 2\n"]
    assert sched(stubs).array_refusal(2, 2, same) is None  # only the body differs: one array
    assert sched(stubs).array_refusal(2, 2, [None, None]) is None  # commands have no #SBATCH lines
    said = sched(stubs).array_refusal(2, 2, ["#!/bin/sh\n#SBATCH --mem=1G\necho 1\n",
                                             "#!/bin/sh\n#SBATCH --mem=2G\necho 2\n"])
    assert said is not None and "different #SBATCH lines" in said and "\n" not in said
