"""Issue 11, the supervisor's half, as a user meets it on the local scheduler: a closed stdout, an
Unattended job's live state, a request the supervisor carries out, a short job that ends in seconds."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.domain.model.jobs.objects import ENDED
from tests.e2e.jobs.cli import DUNSCAITH, Cli, await_condition, await_state

pytestmark = pytest.mark.slow


def test_a_closed_stdout_never_changes_the_supervisors_exit_code(cli: Cli) -> None:
    # `| head -1` closes the pipe after the first line; the supervisor goes on writing (EPIPE) to the end
    done = subprocess.run(["bash", "-c", f'"{DUNSCAITH}" submit --name piped -- sleep 2 | head -1; '
                                         'exit "${PIPESTATUS[0]}"'],
                          env=cli.env(DUNSCAITH_SUPERVISE__POLL="10"), capture_output=True, text=True,
                          timeout=120, cwd=cli.tmp)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert len(done.stdout.splitlines()) == 1 and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert cli.status("piped")["state"] == "succeeded"


def test_status_of_an_unattended_job_asks_the_scheduler_and_shows_it_beside_the_record(cli: Cli) -> None:
    go = cli.tmp / "go"
    supervisor = cli.start("submit", "--name", "lagging", "--", "sh", "-c",
                           f"while [ ! -e {go} ]; do sleep 0.05; done")
    await_state(cli, "lagging", "running", timeout=120)
    os.killpg(supervisor.pid, signal.SIGKILL)  # Unattended: nobody keeps the record up to date now
    supervisor.wait()
    go.touch()
    object_id = str(cli.status("lagging")["attempts"][-1]["object_id"])
    await_condition(lambda: LocalScheduler(cli.root).view(object_id).state in ENDED, 60, "the job's end")  # type: ignore[arg-type]
    shown = cli.status("lagging")
    assert shown["state"] == "running" and shown["live"]["state"] == "completed", shown
    text = cli.run("status", "lagging")
    assert "live: completed" in text.stdout and "the record says running" in text.stdout
    carried = cli.run("supervise", "lagging", timeout=120)
    assert carried.returncode == 0, (carried.stdout, carried.stderr)
    assert "live" not in cli.status("lagging")  # settled: nothing to ask


def test_a_hold_sent_to_a_live_supervisor_reports_it_was_carried_out(cli: Cli) -> None:
    # a command the supervisor confirms waits on for the scheduler's part, and exits 0 only once it is done
    supervisor = cli.start("submit", "--name", "held", "--", "sleep", "120")
    try:
        await_state(cli, "held", "running", timeout=120)
        refused = cli.run("hold", "held")  # it has started: only an object that has not started is held
        assert refused.returncode == 2 and "refused" in refused.stdout + refused.stderr
        given_up = cli.run("give-up", "held")
        assert given_up.returncode == 0, (given_up.stdout, given_up.stderr)
        assert "confirmed by its supervisor" in given_up.stdout and "not carried out" not in given_up.stderr
        cancelled = cli.run("cancel", "held", timeout=120)
        assert cancelled.returncode == 0, (cancelled.stdout, cancelled.stderr)
        assert supervisor.wait(timeout=120) == 1  # cancelled: the outcome is not success
    finally:
        if supervisor.poll() is None:
            cli.run("stop", "--emergency", "held")
            supervisor.wait(timeout=60)


def test_the_readmes_job_ends_within_seconds_with_the_default_poll(cli: Cli) -> None:
    # supervise.poll 10 s (the default): the end is seen through the object's lock, not at the next tick
    done = cli.run("submit", "--name", "hi", "--", "sh", "-c", "echo hi", timeout=60,
                   DUNSCAITH_SUPERVISE__POLL="10", DUNSCAITH_SUPERVISE__WAIT="300")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "succeeded" in done.stdout
