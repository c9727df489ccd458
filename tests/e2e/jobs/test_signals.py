"""Signals drain the supervisor: the job goes on, everything received is committed, the shell sees 128+n."""

from __future__ import annotations

import signal
import subprocess

import pytest

from tests.e2e.jobs.cli import Cli, await_condition, await_state

pytestmark = pytest.mark.slow


def _running(cli: Cli, job: str, *, ignore_hup: bool = False, seconds: int = 4) -> subprocess.Popen[str]:
    proc = cli.start("submit", "--name", job, "--", "sleep", str(seconds), ignore_hup=ignore_hup)
    await_state(cli, job, "running")
    return proc


def _drained_by(cli: Cli, proc: subprocess.Popen[str], job: str, signum: int) -> None:
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signum, err  # died by the signal: the shell reports 128+n
    assert "supervisor stopped by signal" in err
    status = cli.status(job)
    assert status["state"] == "running"  # a signal never cancels the job
    assert status["unattended"] and not status["supervisor"]["held"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_drains_leaves_the_job_running_and_supervise_carries_it_to_its_outcome(
        cli: Cli, signum: int) -> None:
    proc = _running(cli, "sig")
    proc.send_signal(signum)
    _drained_by(cli, proc, "sig", signum)
    notice = cli.run("list")
    assert "job sig is Unattended" in notice.stderr and "dunscaith supervise sig" in notice.stderr
    again = cli.run("supervise", "sig")
    assert again.returncode == 0, again.stderr
    assert cli.status("sig")["state"] == "succeeded"


def test_under_nohup_hup_is_ignored_and_term_still_drains(cli: Cli) -> None:
    proc = _running(cli, "nohup", ignore_hup=True, seconds=10)
    proc.send_signal(signal.SIGHUP)
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)  # still supervising: HUP stayed ignored
    assert cli.status("nohup")["supervisor"]["held"]
    proc.send_signal(signal.SIGTERM)
    _drained_by(cli, proc, "nohup", signal.SIGTERM)
    assert cli.run("supervise", "nohup").returncode == 0


def test_a_second_signal_ends_the_process_at_once_keeping_what_is_committed(cli: Cli) -> None:
    proc = _running(cli, "twice")
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode in (-signal.SIGTERM, -signal.SIGINT)
    status = cli.status("twice")  # the record reads whole
    assert status["state"] in ("running", "succeeded")
    await_condition(lambda: not cli.status("twice")["supervisor"]["held"], what="the lock to be free")
    assert cli.run("supervise", "twice").returncode == 0


def test_supervise_is_refused_while_another_supervisor_holds_the_job(cli: Cli) -> None:
    proc = _running(cli, "held")
    other = cli.run("supervise", "held")
    assert other.returncode == 2
    assert "another supervisor" in other.stderr and len(other.stderr.strip().splitlines()) == 1
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
