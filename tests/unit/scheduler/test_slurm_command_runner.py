"""How a Slurm client is run: its answer, its failures, its timeout, and that no descriptor of ours reaches it.

The clients here are small sh scripts standing in for squeue and sbatch; what a real squeue says is in the
Slurm integration and contract tests.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from dunscaith.adapters.durable.lock import FlockLock, is_held
from dunscaith.adapters.scheduler.client_command import CommandRunner


def runner(tmp_path: Path, **scripts: str) -> CommandRunner:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    return CommandRunner(bin_dir, {"DUNSCAITH_TEST_VALUE": "from the cluster's env"})


def test_a_query_client_answers_with_its_output_exit_code_and_the_clusters_environment(tmp_path: Path) -> None:
    run = runner(tmp_path, squeue='printf "a\\r\\nb\\n"; echo "$DUNSCAITH_TEST_VALUE" >&2; echo "$@" >&2; exit 3')
    result = run.run("squeue", ["--name=x", "two words"], timeout=30)
    assert (result.returncode, result.stdout) == (3, "a\nb\n")
    assert result.stderr == "from the cluster's env\n--name=x two words\n"
    assert not result.ok and "exited with 3: --name=x two words" in result.failure()


def test_a_client_killed_by_a_signal_says_so(tmp_path: Path) -> None:
    result = runner(tmp_path, squeue="kill -9 $$").run("squeue", [], timeout=30)
    assert result.killed_by == 9 and "killed by signal 9" in result.failure()


def test_a_missing_or_unrunnable_client_never_ran(tmp_path: Path) -> None:
    run = runner(tmp_path, squeue="true")
    assert "no executable scontrol" in run.run("scontrol", [], timeout=30).spawn_error
    (tmp_path / "bin" / "sacct").write_text("#!/nonexistent/interpreter\n")
    (tmp_path / "bin" / "sacct").chmod(0o755)
    result = run.run("sacct", [], timeout=30)
    assert result.returncode is None and result.spawn_error and "could not be started" in result.failure()


def test_a_timeout_kills_the_clients_whole_group_and_keeps_what_it_wrote(tmp_path: Path) -> None:
    # the client leaves a child holding its pipes: the group goes, not only the client
    run = runner(tmp_path, squeue=f"echo started; sleep 300 & echo $! > {tmp_path}/child.pid; wait")
    began = time.monotonic()
    result = run.run("squeue", [], timeout=1.0)
    assert result.timed_out and result.returncode is None and result.stdout == "started\n"
    assert time.monotonic() - began < 30
    child = int((tmp_path / "child.pid").read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(200):  # killed at once; reaped by init soon after
            os.kill(child, 0)
            time.sleep(0.05)


def test_no_descriptor_of_the_caller_reaches_the_client_not_even_an_inheritable_one(tmp_path: Path) -> None:
    # A supervisor holds its job's lock as an flock: if its descriptor lived on in an orphaned client,
    # the lock would outlive the supervisor. Python opens every descriptor close-on-exec; one that is not
    # (inherited from whoever started dunscaith, or made inheritable) is closed for the client all the same.
    lock = FlockLock(tmp_path / "job.lock")
    lock.acquire()
    leaky = os.open(tmp_path / "other.lock", os.O_RDWR | os.O_CREAT, 0o600)
    os.set_inheritable(leaky, True)
    fcntl.flock(leaky, fcntl.LOCK_EX)
    leave_one = f"sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {tmp_path}/orphan.pid"
    run = runner(tmp_path, squeue=f"ls /proc/$$/fd; {leave_one}",
                 sbatch="ls /proc/$$/fd")
    try:
        listed = run.run("squeue", [], timeout=30)
        assert listed.ok and sorted(int(fd) for fd in listed.stdout.split()) == [0, 1, 2, 10]  # 10: sh's script
        with_input = run.run("sbatch", [], timeout=30, stdin="#!/bin/sh\n", cwd=tmp_path)  # through subprocess
        assert with_input.ok and sorted(int(fd) for fd in with_input.stdout.split()) == [0, 1, 2, 10]
        lock.release()
        os.close(leaky)
        # the orphan the client left still runs, and holds neither lock
        assert not is_held(tmp_path / "job.lock") and not is_held(tmp_path / "other.lock")
    finally:
        orphan = tmp_path / "orphan.pid"
        if orphan.exists():
            os.kill(int(orphan.read_text()), 9)


def test_a_client_with_input_or_a_working_directory_gets_both(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    run = runner(tmp_path, sbatch="pwd; cat")
    result = run.run("sbatch", ["--parsable"], timeout=30, stdin="#!/bin/sh\necho hi\n", cwd=work)
    assert result.ok and result.stdout == f"{work}\n#!/bin/sh\necho hi\n"


@pytest.mark.parametrize("stdin", [None, "#!/bin/sh\ntrue\n"])  # a query client, and sbatch (input on stdin)
def test_a_call_still_unanswered_after_a_while_is_said_to_be_waited_for_once_while_it_waits(
        tmp_path: Path, stdin: str | None) -> None:
    go = tmp_path / "go"
    said: list[tuple[str, float, float]] = []

    def waiting(call: str, waited: float, timeout: float) -> None:
        said.append((call, waited, timeout))
        go.touch()  # the client answers only once it was said to be waited for

    bin_dir = runner(tmp_path, scontrol=f"while [ ! -e {go} ]; do sleep 0.05; done; echo answered")._bin_dir
    slow = CommandRunner(bin_dir, {}, waiting, notice_after=0.2)
    result = slow.run("scontrol", ["show", "config"], timeout=30, stdin=stdin)
    assert result.ok and result.stdout == "answered\n"
    assert said == [("scontrol show config", 0.2, 30)]


def test_a_call_that_answers_in_time_says_nothing(tmp_path: Path) -> None:
    said: list[object] = []
    bin_dir = runner(tmp_path, squeue="echo quick")._bin_dir
    quick = CommandRunner(bin_dir, {}, lambda *a: said.append(a), notice_after=5)
    assert quick.run("squeue", [], timeout=30).ok and said == []


def test_the_call_waited_for_is_named_by_its_program_and_first_words_never_its_options(tmp_path: Path) -> None:
    go = tmp_path / "go"
    said: list[str] = []
    bin_dir = runner(tmp_path, scontrol=f"while [ ! -e {go} ]; do sleep 0.05; done")._bin_dir

    def waiting(call: str, waited: float, timeout: float) -> None:
        said.append(call)
        go.touch()

    CommandRunner(bin_dir, {}, waiting, notice_after=0.2).run(
        "scontrol", ["--clusters=big", "-o", "show", "job", "42"], timeout=30)
    assert said == ["scontrol show job"]


def test_a_job_s_environment_reaches_sbatch_under_the_cluster_s_own_which_wins(tmp_path: Path) -> None:
    base = runner(tmp_path, sbatch='echo "$DUNSCAITH_TEST_VALUE|$JOB_ONLY"')
    result = base.with_env({"DUNSCAITH_TEST_VALUE": "the job's", "JOB_ONLY": "the job's too"}).run(
        "sbatch", [], timeout=30, stdin="#!/bin/sh\n")
    assert result.stdout == "from the cluster's env|the job's too\n"
