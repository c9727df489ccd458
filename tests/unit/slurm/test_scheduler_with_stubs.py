"""SlurmCliScheduler against stub Slurm commands (real processes in a tmp bin_dir, no real cluster).

Each stub records its argv and prints a canned answer, so these tests check exactly what is asked
and how each kind of answer is read: timeouts, killed clients, failures, empty answers.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.adapters.scheduler.slurm.squeue import RS, US
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import CreateOutcome, ObjectSpec, ObjectState, OutputPaths
from dunscaith.ports.scheduler import SchedulerError
from tests.contract.sweeping import stopped_ids, sweep_once

CONFIG_OUT = "MessageTimeout          = 1 sec\nAccountingStorageType   = accounting_storage/slurmdbd\n"


class Stubs:
    def __init__(self, root: Path) -> None:
        self.bin = root / "bin"
        self.bin.mkdir()
        self.log = root / "calls.log"
        self.root = root
        for name in ("sbatch", "squeue", "scontrol", "scancel", "sacct"):
            self.set(name)
        self.set("scontrol", stdout=CONFIG_OUT)

    def set(self, name: str, stdout: str = "", stderr: str = "", rc: int = 0, body: str = "") -> None:
        (self.root / f"{name}.out").write_text(stdout)
        (self.root / f"{name}.err").write_text(stderr)
        log = shlex.quote(str(self.log))
        script = (
            "#!/bin/sh\n"
            f'printf "%s\\n" "{name} $*" >> {log}\n'
            f"cat > {shlex.quote(str(self.root / (name + '.stdin')))}\n" if name == "sbatch" else
            "#!/bin/sh\n" f'printf "%s\\n" "{name} $*" >> {log}\n'
        )
        script += body + "\n"
        script += f"cat {shlex.quote(str(self.root / (name + '.out')))}\n"
        script += f"cat {shlex.quote(str(self.root / (name + '.err')))} >&2\nexit {rc}\n"
        path = self.bin / name
        path.write_text(script)
        os.chmod(path, 0o755)

    def calls(self, name: str | None = None) -> list[str]:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [ln for ln in lines if name is None or ln.split(" ", 1)[0] == name]


@pytest.fixture
def stubs(tmp_path: Path) -> Stubs:
    return Stubs(tmp_path)


def sched(stubs: Stubs, **kw: object) -> SlurmCliScheduler:
    base: dict[str, object] = {"bin_dir": stubs.bin, "env": {"SLURM_CONF": "/nowhere/slurm.conf"}, "user": "alice",
            "submit_timeout": 0.5, "submit_timeout_margin": 0.0, "command_timeout": 2.0}
    base.update(kw)
    return SlurmCliScheduler(SlurmClusterConfig(**base))  # type: ignore[arg-type]


def spec(**kw: object) -> ObjectSpec:
    base: dict[str, object] = {"name": JobId("job-1"), "nonce": Nonce("n-1"), "command": ("echo", "it's $HOME")}
    base.update(kw)
    return ObjectSpec(**base)  # type: ignore[arg-type]


def squeue_record(job_id: str, name: str, state: str, reason: str = "None", user: str = "alice", host: str = "n/a",
                  end: str = "N/A", comment: str = "n-1", restarts: str = "0", task: str = "N/A") -> str:
    """One line of squeue's answer; ``task``: the array task index (``job_id`` then ``A_i``)."""
    return US.join((job_id, name, state, reason, user, restarts, host, end, task, comment)) + RS + "\n"


# ---- create ------------------------------------------------------------------------------------
def test_create_sends_one_held_sbatch_with_name_nonce_and_the_script_on_stdin(stubs: Stubs) -> None:
    stubs.set("sbatch", stdout="42\n")
    answer = sched(stubs).create_held(spec(options=("--partition=debug",), workdir="/tmp"))
    assert answer.outcome is CreateOutcome.CREATED and answer.object_id == "42"
    [call] = stubs.calls("sbatch")
    assert call.split(" ")[1:] == ["--partition=debug", "--chdir=/tmp", "--parsable", "--hold",
                                   "--job-name=job-1", "--comment=n-1"]
    assert (stubs.root / "sbatch.stdin").read_text() == "#!/bin/sh\nexec echo 'it'\"'\"'s $HOME'\n"


def test_create_passes_clusters(stubs: Stubs) -> None:
    stubs.set("sbatch", stdout="42;c1\n")
    answer = sched(stubs, clusters="c1").create_held(spec())
    assert answer.object_id == "42"
    assert stubs.calls("sbatch")[0].endswith("--clusters=c1")


def test_a_hanging_sbatch_is_unknown_after_a_timeout_never_below_message_timeout(stubs: Stubs) -> None:
    stubs.set("sbatch", body="sleep 30")
    s = sched(stubs)
    assert s.submit_timeout() == 2.0  # MessageTimeout 1 s, doubled: above the configured 0.5 s
    started = time.monotonic()
    answer = s.create_held(spec())
    assert answer.outcome is CreateOutcome.UNKNOWN
    assert time.monotonic() - started < 20
    assert len(stubs.calls("sbatch")) == 1  # never retried


def test_a_timeout_returns_even_when_a_grandchild_outside_the_group_keeps_the_pipes(stubs: Stubs) -> None:
    stubs.set("squeue", body="setsid sleep 8 & sleep 30")
    started = time.monotonic()
    result = sched(stubs, command_timeout=0.5).query([JobId("job-1")], confirm_absent=True)
    assert not result.complete and "in time" in result.detail
    assert time.monotonic() - started < 20


def test_without_message_timeout_sbatch_gets_the_floor(stubs: Stubs) -> None:
    stubs.set("scontrol", rc=1, stderr="slurm_load_ctl_conf error: Unable to contact slurm controller\n")
    assert sched(stubs, submit_timeout_unknown_floor=123.0).submit_timeout() == 123.0


def test_a_killed_sbatch_is_unknown(stubs: Stubs) -> None:
    stubs.set("sbatch", body="kill -9 $$")
    assert sched(stubs).create_held(spec()).outcome is CreateOutcome.UNKNOWN


def test_a_refusal_is_refused(stubs: Stubs) -> None:
    stubs.set("sbatch", rc=1, stderr="sbatch: error: Batch job submission failed: Invalid partition name specified\n")
    answer = sched(stubs).create_held(spec())
    assert answer.outcome is CreateOutcome.REFUSED and "Invalid partition" in answer.detail


def test_a_missing_sbatch_sent_nothing(stubs: Stubs) -> None:
    (stubs.bin / "sbatch").unlink()
    answer = sched(stubs).create_held(spec())
    assert answer.outcome is CreateOutcome.REFUSED and "nothing was sent" in answer.detail


@pytest.mark.parametrize("options", [("--job-name=x",), ("-J", "x"), ("-Jx",), ("--comment=x",), ("--array=1-3",),
                                     ("--wrap=true",), ("-H",), ("--clusters=x",), ("--arr=1-3",), ("--comm=x",),
                                     ("--wai",)])
def test_options_that_would_break_the_barrier_are_refused_before_sending(
        stubs: Stubs, options: tuple[str, ...]) -> None:
    answer = sched(stubs).create_held(spec(options=options))
    assert answer.outcome is CreateOutcome.REFUSED
    assert stubs.calls("sbatch") == []


@pytest.mark.parametrize("bad", [{"name": JobId("a,b")}, {"nonce": Nonce("x y")}, {"command": ()},
                                 {"script": "no shebang"}, {"script": "#!/bin/sh\n", "command": ("x",)}])
def test_unsendable_specs_are_refused_before_sending(stubs: Stubs, bad: dict[str, object]) -> None:
    assert sched(stubs).create_held(spec(**bad)).outcome is CreateOutcome.REFUSED
    assert stubs.calls("sbatch") == []


def test_ordinary_options_pass(stubs: Stubs) -> None:
    stubs.set("sbatch", stdout="1\n")
    options = ("--partition=debug", "-c", "2", "--wait-all-nodes=1", "--time=10", "--mem=1G", "--export=ALL")
    assert sched(stubs).create_held(spec(options=options)).outcome is CreateOutcome.CREATED


def test_spec_env_reaches_sbatch_environment(stubs: Stubs) -> None:
    stubs.set("sbatch", stdout="1\n", body='printf "%s" "$MY_VAR" > "$(dirname "$0")/../env.seen"')
    sched(stubs).create_held(spec(env={"MY_VAR": "v 1"}))
    assert (stubs.root / "env.seen").read_text() == "v 1"


# ---- query -------------------------------------------------------------------------------------
def test_query_asks_squeue_once_for_a_thousand_names(stubs: Stubs) -> None:
    names = [JobId(f"job-{i}") for i in range(1000)]
    stubs.set("squeue", stdout=squeue_record("7", "job-5", "PENDING", "JobHeldUser"))
    result = sched(stubs, accounting=False).query(names, confirm_absent=True)
    assert result.complete and [v.object_id for v in result.objects] == ["7"]
    assert result.objects[0].state is ObjectState.HELD and result.objects[0].nonce == "n-1"
    assert len(stubs.calls("squeue")) == 1 and stubs.calls("sacct") == []


@pytest.mark.parametrize("body,rc,stderr", [
    ("", 1, "slurm_load_jobs error: Socket timed out on send/recv operation\n"),
    ("sleep 30", 0, ""),
    ("kill -9 $$", 0, ""),
])
def test_a_failed_squeue_is_incomplete_never_done(stubs: Stubs, body: str, rc: int, stderr: str) -> None:
    stubs.set("squeue", rc=rc, stderr=stderr, body=body)
    result = sched(stubs, command_timeout=1.0).query([JobId("job-1")], confirm_absent=True)
    assert not result.complete and result.objects == ()
    assert stubs.calls("sacct") == []  # absence after a failure proves nothing: nothing to confirm


def test_garbage_from_squeue_is_incomplete(stubs: Stubs) -> None:
    stubs.set("squeue", stdout="something else\n")
    assert not sched(stubs).query([JobId("job-1")], confirm_absent=True).complete


def test_an_empty_squeue_is_confirmed_in_accounting_and_stays_unknown(stubs: Stubs) -> None:
    result = sched(stubs).query([JobId("job-1")], confirm_absent=True)
    assert result.complete and result.objects == ()
    [call] = stubs.calls("sacct")
    # job-1 may be element 1 of a sweep "job": the tasks of an array named job are asked for too
    assert "--name=job,job-1" in call and "--endtime=now" in call


def test_a_purged_job_comes_back_from_accounting(stubs: Stubs) -> None:
    stubs.set("sacct", stdout="9|job-1|FAILED|3:0|alice|vm|n-1\n")
    [view] = sched(stubs).query([JobId("job-1")], confirm_absent=True).objects
    assert (view.object_id, view.state, view.exit_code, view.nonce, view.started) == (
        "9", ObjectState.FAILED, 3, "n-1", True)


def test_a_failed_sacct_makes_the_answer_incomplete(stubs: Stubs) -> None:
    stubs.set("sacct", rc=1, stderr="sacct: error: Problem talking to the database: Connection refused\n")
    result = sched(stubs).query([JobId("job-1")], confirm_absent=True)
    assert not result.complete and "sacct" in result.detail


def test_exit_codes_of_ended_jobs_come_from_scontrol_once(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=squeue_record("7", "job-1", "FAILED", "NonZeroExitCode", host="vm", end="T1")
              + squeue_record("8", "job-1", "COMPLETED", host="vm", end="T2"))
    stubs.set("scontrol", stdout="JobId=7 JobName=job-1 JobState=FAILED ExitCode=3:0\n")
    s = sched(stubs, accounting=False)
    for _ in range(2):
        views = {v.object_id: v for v in s.query([JobId("job-1")], confirm_absent=True).objects}
        assert (views[ObjectId("7")].exit_code, views[ObjectId("8")].exit_code) == (3, 0)
    assert [c for c in stubs.calls("scontrol") if "show job" in c] == ["scontrol -o show job 7"]


def test_an_ended_job_without_its_exit_code_is_left_out_and_the_answer_incomplete(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=squeue_record("7", "job-1", "FAILED", host="vm", end="T1"))
    stubs.set("scontrol", rc=1, stderr="slurm_load_jobs error: Invalid job id specified\n")
    result = sched(stubs, accounting=False).query([JobId("job-1")], confirm_absent=True)
    assert not result.complete and result.objects == ()


# ---- actions -----------------------------------------------------------------------------------
def scontrol_job(state: str, eligible: str = "2026-11-30T04:24:51", rc_for: str = "", message: str = "") -> str:
    """A scontrol stub body: ``show job`` describes the job; the subcommand ``rc_for`` fails with ``message``."""
    fail = f'*" {rc_for} "*) echo "{message}" >&2; exit 1;;' if rc_for else ""
    return (f'case " $* " in {fail} *" show job "*) echo "JobId=5 JobName=job-1 JobState={state} '
            f'EligibleTime={eligible} ExitCode=0:0"; exit 0;; esac; exit 0')


def test_hold_checks_the_job_is_pending_then_makes_a_user_hold(stubs: Stubs) -> None:
    stubs.set("scontrol", body=scontrol_job("PENDING"))
    sched(stubs).hold(ObjectId("5"))
    assert stubs.calls("scontrol") == ["scontrol -o show job 5", "scontrol uhold 5"]


def test_a_running_job_cannot_be_held(stubs: Stubs) -> None:
    stubs.set("scontrol", body=scontrol_job("RUNNING"))
    with pytest.raises(SchedulerError, match="only a pending object"):
        sched(stubs).hold(ObjectId("5"))
    assert "scontrol uhold 5" not in stubs.calls("scontrol")


def test_an_action_that_fails_raises_with_slurms_message(stubs: Stubs) -> None:
    stubs.set("scontrol", rc=1, stderr="Invalid job id specified for job 5\n")
    with pytest.raises(SchedulerError, match="Invalid job id"):
        sched(stubs).requeue(ObjectId("5"))


def test_cancel_of_an_unknown_id_is_an_error_though_scancel_says_nothing(stubs: Stubs) -> None:
    stubs.set("scontrol", rc=1, stderr="slurm_load_jobs error: Invalid job id specified\n")
    with pytest.raises(SchedulerError, match="Invalid job id"):
        sched(stubs).cancel(ObjectId("5"))
    assert stubs.calls("scancel") == []


def test_cancel_of_an_ended_job_changes_nothing(stubs: Stubs) -> None:
    stubs.set("scontrol", body=scontrol_job("COMPLETED"))
    sched(stubs).cancel(ObjectId("5"))
    assert stubs.calls("scancel") == []


def test_releasing_an_ended_job_that_was_released_changes_nothing(stubs: Stubs) -> None:
    stubs.set("scontrol", body=scontrol_job("COMPLETED", rc_for="release", message="Job has already finished"))
    sched(stubs).release(ObjectId("5"))


def test_releasing_a_job_cancelled_while_held_is_an_error(stubs: Stubs) -> None:
    stubs.set("scontrol", body=scontrol_job("CANCELLED", eligible="Unknown", rc_for="release",
                                            message="Job has already finished"))
    with pytest.raises(SchedulerError, match="before it was ever released"):
        sched(stubs).release(ObjectId("5"))


def test_stop_by_name_queries_first_then_cancels_by_name_and_user(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=squeue_record("7", "job-1", "RUNNING", host="vm")
              + squeue_record("8", "job-1", "PENDING", "JobHeldUser")
              + squeue_record("9", "job-1", "RUNNING", user="bob", host="vm"))
    assert sched(stubs).stop_by_name(JobId("job-1")) == ["7", "8"]
    assert stubs.calls("scancel") == ["scancel --name=job-1 --user=alice"]
    assert stubs.calls("sacct") == []


def test_a_sweep_stops_only_own_not_started_objects_of_the_listed_nonces_in_one_scancel(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=(
        squeue_record("1", "a", "PENDING", "JobHeldUser", comment="n-a")  # stop
        + squeue_record("2", "a", "PENDING", "JobHeldUser", comment="n-other")  # another attempt: keep
        + squeue_record("3", "a", "RUNNING", host="vm", comment="n-a")  # running: never
        + squeue_record("4", "b", "PENDING", "JobHeldUser", user="bob", comment="x")  # foreign: never
        + squeue_record("5", "b", "PENDING", "None", comment="y")  # pruned job, any nonce: stop
        + squeue_record("6", "b", "PENDING", "BeginTime", comment="y", restarts="1")  # requeued, had run: never
    ))
    stubs.set("scancel", stderr="scancel: Terminating job 1\nscancel: Terminating job 5\n")
    report = sweep_once(sched(stubs), {JobId("a"): frozenset({Nonce("n-a")}), JobId("b"): None})
    assert stopped_ids(report) == ["1", "5"] and report.problems == []
    assert stubs.calls("scancel") == ["scancel -v --state=PENDING --user=alice 1 5"]
    assert len(stubs.calls("squeue")) == 1 and stubs.calls("sacct") == []


def test_a_sweep_with_nothing_to_stop_is_one_squeue_and_no_scancel(stubs: Stubs) -> None:
    stubs.set("squeue", stdout=squeue_record("3", "a", "RUNNING", host="vm", comment="n-a"))
    report = sweep_once(sched(stubs), {JobId(f"job-{i}"): None for i in range(1000)} | {JobId("a"): None})
    assert (report.stopped, report.problems) == ([], [])
    assert len(stubs.calls("squeue")) == 1 and stubs.calls("scancel") == [] and stubs.calls("sacct") == []


# ---- cancel_if_not_started: what scancel -v says it did (Slurm 22.05, notes/slurm-local.md) -----
INVALID = "scancel: error: Kill job error on job id {}: Invalid job id specified\n"


def test_cancel_if_not_started_reports_the_jobs_scancel_terminated(stubs: Stubs) -> None:
    # 1 held: terminated; 2 started meanwhile: skipped silently by --state; 3 ended and 4 purged: invalid
    # ids; 5 ended between scancel's load and its cancel
    stubs.set("scancel", rc=1, stderr=(INVALID.format(3) + INVALID.format(4) + "scancel: select/cons_tres: "
                                       "common_init: select/cons_tres loaded\nscancel: Terminating job 1\n"
                                       "scancel: Terminating job 5\nscancel: error: Kill job error on job id 5: "
                                       "Job/step already completing or completed\n"))
    assert sched(stubs).cancel_if_not_started([ObjectId(i) for i in "12345"]) == ["1"]
    assert stubs.calls("scancel") == ["scancel -v --state=PENDING --user=alice 1 2 3 4 5"]


def test_cancel_if_not_started_with_nothing_pending_stops_nothing(stubs: Stubs) -> None:
    stubs.set("scancel", rc=1, stderr=INVALID.format(1) + "scancel: error: No active jobs match ALL job filters, "
              "including: state=PENDING user_name=alice \n")
    assert sched(stubs).cancel_if_not_started([ObjectId("1")]) == []


def test_cancel_if_not_started_of_a_job_whose_kill_failed_is_not_stopped_and_says_why(stubs: Stubs) -> None:
    stubs.set("scancel", rc=1, stderr="scancel: Terminating job 1\nscancel: Terminating job 2\n"
              "scancel: error: Kill job error on job id 2: Access/permission denied\n")
    with pytest.raises(SchedulerError, match=r"stopped 1; .*Access/permission denied"):
        sched(stubs).cancel_if_not_started([ObjectId("1"), ObjectId("2")])


@pytest.mark.parametrize("body,rc,stderr", [
    ("sleep 30", 0, ""),
    ("kill -9 $$", 0, ""),
    ("", 1, "scancel: error: Unable to contact slurm controller (connect failure)\n"),
    ("", 1, ""),
])
def test_cancel_if_not_started_that_got_no_clear_answer_raises_never_says_stopped_nothing(
        stubs: Stubs, body: str, rc: int, stderr: str) -> None:
    stubs.set("scancel", rc=rc, stderr=stderr, body=body)
    with pytest.raises(SchedulerError, match="stopped nothing"):
        sched(stubs, command_timeout=1.0).cancel_if_not_started([ObjectId("1")])


def test_cancel_if_not_started_on_a_cluster_passes_clusters(stubs: Stubs) -> None:
    stubs.set("scancel", stderr="scancel: Terminating job 7\n")
    assert sched(stubs, clusters="c1").cancel_if_not_started([ObjectId("7"), ObjectId("7")]) == ["7"]
    assert stubs.calls("scancel") == ["scancel -v --state=PENDING --user=alice --clusters=c1 7"]


# ---- output_paths ------------------------------------------------------------------------------
def test_output_paths_are_stdout_and_stderr_of_scontrol_spaces_and_all(stubs: Stubs) -> None:
    stubs.set("scontrol", stdout="JobId=5 JobName=job-1 WorkDir=/w d StdErr=/w d/e 5.txt StdIn=/dev/null "
                                 "StdOut=/w d/o 5.txt Power= \n")
    assert sched(stubs).output_paths(ObjectId("5")) == OutputPaths("/w d/o 5.txt", "/w d/e 5.txt")
    assert stubs.calls("scontrol") == ["scontrol -o show job 5"]


def test_output_paths_of_a_job_slurm_forgot_are_none(stubs: Stubs) -> None:
    stubs.set("scontrol", rc=1, stderr="slurm_load_jobs error: Invalid job id specified\n")
    assert sched(stubs).output_paths(ObjectId("5")) is None


def test_a_sweeps_poll_answers_the_same_views_again_and_a_changed_task_anew(stubs: Stubs) -> None:
    names = [JobId(f"exp-{i}") for i in range(1, 11)]
    pending = "".join(squeue_record(f"7_{i}", "exp", "PENDING", "Priority", task=str(i)) for i in range(1, 11))
    stubs.set("squeue", stdout=pending)
    s = sched(stubs)
    first = s.query(names, confirm_absent=True)
    assert [v.name for v in first.objects] == names and first.complete
    stubs.set("squeue", stdout=pending.replace(squeue_record("7_3", "exp", "PENDING", "Priority", task="3"),
                                               squeue_record("7_3", "exp", "RUNNING", host="vm", task="3")))
    second = s.query(names, confirm_absent=True)
    assert second.complete and [v.name for v in second.objects] == names
    assert all(a is b for a, b in zip(first.objects, second.objects, strict=True) if a.name != "exp-3")
    changed = next(v for v in second.objects if v.name == "exp-3")
    assert changed.state is ObjectState.RUNNING and changed.started
    assert second.objects == tuple(sched(stubs).query(names, confirm_absent=True).objects)  # as a fresh reading
