"""Issue 24's features as a user runs them on the real Slurm 22.05 (the Slurm e2e fixtures; skipped, naming
what is missing, without the Debian packages): ``watch`` from a second terminal, ``cancel`` saying stopping
then stopped, ``logs --tail`` / ``logs --all`` of Slurm's one output file, and ``submit --job-exit-code``
for a job's own code and for a signal as sacct gives it."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli, await_state
from tests.e2e.jobs.test_watch import Lines
from tests.expect import present

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def _waiting(cli: Cli, job: str, then: str = "exit 0") -> tuple[subprocess.Popen[str], Path]:
    """A Slurm job that runs until its file ``go`` exists (the test cluster's one node is this host),
    then runs ``then``; supervised by ``submit`` in a process of its own."""
    go = cli.tmp / f"go-{job}"
    proc = cli.start("submit", "--cluster", "test", "--name", job, "--", "sh", "-c",
                     f"while [ ! -e {go} ]; do sleep 0.2; done; {then}")
    await_state(cli, job, "running", timeout=120)
    return proc, go


def test_watch_of_a_slurm_job_from_a_second_terminal_shows_the_supervisors_lines_and_exits_as_it_does(
        on_slurm: Cli) -> None:
    submit, go = _waiting(on_slurm, "sl-watch", then="exit 3")
    try:
        object_id = on_slurm.status("sl-watch")["attempts"][0]["object_id"]
        watcher = on_slurm.start("watch", "sl-watch")
        lines = Lines(watcher)
        assert "recorded job sl-watch for cluster test" in lines.until("recorded job sl-watch")
        assert object_id in lines.until("released to run")  # Slurm's own job id, as squeue shows it
        lines.until("is running")
        lines.until("watching: a supervisor elsewhere holds this job (now running)")
        go.touch()
        said = lines.until("outcome: failed")
        assert "exit code 3" in said, said
        out, err = lines.rest(120)
        assert submit.wait(timeout=120) == 1, present(submit.stderr).read()
        assert watcher.returncode == submit.returncode == 1, err
        # the supervisor's own outcome line, word for word after its timestamp, is one the watcher printed
        supervised = present(submit.stdout).read()
        outcome = next(line for line in supervised.splitlines() if "outcome: failed" in line)
        assert outcome.split(" ", 1)[1] in "".join(lines.seen) + out
    finally:
        go.touch()
        if submit.poll() is None:
            submit.kill()


def test_cancel_of_a_running_slurm_job_says_stopping_then_stopped_and_json_says_stopped(on_slurm: Cli) -> None:
    supervisor = on_slurm.start("submit", "--cluster", "test", "--name", "sl-stop", "--", "sleep", "300")
    try:
        await_state(on_slurm, "sl-stop", "running", timeout=120)
        object_id = on_slurm.status("sl-stop")["attempts"][0]["object_id"]
        done = on_slurm.run("cancel", "sl-stop", timeout=180)
        assert done.returncode == 0, (done.stdout, done.stderr)
        lines = done.stdout.strip().splitlines()
        assert len(lines) == 2, lines
        assert "cancel confirmed by its supervisor" in lines[0] and lines[0].endswith("(now stopping)"), lines
        assert f"job sl-stop: object {object_id} stopped (now cancelled)" in lines[1], lines
        assert supervisor.wait(timeout=120) == 1  # the outcome is not success
        status = on_slurm.status("sl-stop")
        assert status["outcome"]["result"] == "cancelled", status["outcome"]
        assert [a["object_state"] for a in status["attempts"]] == ["cancelled"]
    finally:
        if supervisor.poll() is None:
            supervisor.kill()

    supervisor = on_slurm.start("submit", "--cluster", "test", "--name", "sl-stop-json", "--", "sleep", "300")
    try:
        await_state(on_slurm, "sl-stop-json", "running", timeout=120)
        done = on_slurm.run("cancel", "sl-stop-json", "--json", timeout=180)
        assert done.returncode == 0, (done.stdout, done.stderr)
        answer = json.loads(done.stdout)
        assert (answer["answer"], answer["stopped"], answer["state"]) == ("confirmed", True, "cancelled"), answer
        assert supervisor.wait(timeout=120) == 1
    finally:
        if supervisor.poll() is None:
            supervisor.kill()


def test_logs_tail_and_all_of_a_finished_slurm_job_with_one_output_file(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "sl-logs", "--", "sh", "-c",
                        "echo e1 >&2; seq 1 5", timeout=180)
    assert done.returncode == 0, (done.stdout, done.stderr)
    status = on_slurm.status("sl-logs")
    assert status["stdout"] == status["stderr"], status  # Slurm's default: both in slurm-%j.out
    tailed = on_slurm.run("logs", "--tail", "2", "sl-logs")
    assert (tailed.returncode, tailed.stdout) == (0, "4\n5\n"), tailed.stderr
    both = on_slurm.run("logs", "--all", "sl-logs")
    assert both.returncode == 0, both.stderr
    assert both.stdout == f"==> stdout and stderr: {status['stdout']} <==\ne1\n1\n2\n3\n4\n5\n", both.stdout


@pytest.mark.parametrize(("name", "body", "code", "sig"), [
    ("sl-exit3", "exit 3", 3, None),
    ("sl-term", "kill -TERM $$", 128 + signal.SIGTERM, signal.SIGTERM),
])
def test_submit_job_exit_code_on_slurm_is_the_jobs_own_code_or_128_plus_its_signal(
        on_slurm: Cli, name: str, body: str, code: int, sig: int | None) -> None:
    script = on_slurm.tmp / f"{name}.sh"
    script.write_text(f"#!/bin/sh\necho before\n{body}\necho after\n")
    done = on_slurm.run("submit", "--job-exit-code", "--cluster", "test", "--name", name, str(script), timeout=180)
    assert done.returncode == code, (done.stdout, done.stderr)
    assert f"{name}: outcome: failed" in done.stdout, done.stdout
    status = on_slurm.status(name)
    [attempt] = status["attempts"]
    # sacct's ExitCode 0:15 is signal 15 and no exit code, as the local scheduler says it
    assert (attempt["exit_code"], attempt["signal"]) == ((None, sig) if sig else (code, None)), attempt
    with open(status["stdout"]) as output:
        assert output.read() == "before\n"
    as_json = on_slurm.run("supervise", "--json", "--job-exit-code", name, timeout=60)  # settled: read again
    assert as_json.returncode == code, as_json.stderr
    result = json.loads(as_json.stdout)
    assert (result["job_exit_code"], result["job_signal"], result["exit_code_from"]) == (
        None if sig else code, sig, "job"), result


def test_submit_job_exit_code_of_a_slurm_job_at_its_time_limit_is_1_and_no_exit_code(on_slurm: Cli) -> None:
    """Slurm gives a timed-out job ExitCode 0:0 (only its batch step 0:15): no code, so 1 from dunscaith,
    never 0 and never "exit code 0" (docs/exit-codes.md). Slurm's shortest limit is a minute."""
    done = on_slurm.run("submit", "--json", "--job-exit-code", "--cluster", "test", "--name", "sl-limit",
                        "--time", "1", "--", "sleep", "600", timeout=300)
    assert done.returncode == 1, (done.stdout, done.stderr)
    result = json.loads(done.stdout)
    assert result["outcome"]["result"] == "failed" and "timeout" in result["outcome"]["detail"], result
    assert "exit code" not in result["outcome"]["detail"], result["outcome"]
    assert (result["job_exit_code"], result["job_signal"], result["exit_code_from"]) == (None, None, "dunscaith")
    [attempt] = result["attempts"]
    assert (attempt["object_state"], attempt["exit_code"], attempt["signal"]) == ("timeout", None, None), attempt
