"""``dunscaith submit --cluster`` on a real Slurm 22.05 (started by the test setup; skipped, naming what
is missing, without the Debian packages)."""

from __future__ import annotations

import pytest

from tests.e2e.jobs.cli import Cli

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def test_a_job_on_slurm_is_created_held_released_and_succeeds(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "on-slurm", "--", "true", timeout=180)
    assert done.returncode == 0, (done.stdout, done.stderr)
    status = on_slurm.status("on-slurm")
    assert status["state"] == "succeeded" and status["adapter"] == "slurm"
    assert [a["object_state"] for a in status["attempts"]] == ["completed"]


def test_a_failing_job_on_slurm_exits_1(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "fails", "--", "sh", "-c", "exit 4", timeout=180)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "exit code 4" in done.stdout


@pytest.mark.parametrize("point", ["submitting-committed", "create-answered", "release-sent"])
def test_a_crash_on_slurm_is_carried_on_by_supervise_without_a_second_job(on_slurm: Cli, point: str) -> None:
    import signal

    job = f"slurm-crash-{point}"
    crashed = on_slurm.run("submit", "--cluster", "test", "--name", job, "--", "true", timeout=180,
                           DUNSCAITH_TEST_CRASH_AT=point)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    carried = on_slurm.run("supervise", job, timeout=180)
    assert carried.returncode in (0, 5), (carried.stdout, carried.stderr)
    status = on_slurm.status(job)
    assert status["outcome"]["result"] == "succeeded"
    ran = [a for a in status["attempts"] if a["object_state"] == "completed"]
    assert len(ran) == 1, status["attempts"]
