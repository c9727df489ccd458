"""``submit --json --job-exit-code`` on a real Slurm 22.05 (the Slurm e2e fixtures; skipped, naming what is
missing, without the Debian packages): the object names Slurm's own job id, and the command exits with
the job's own code."""

from __future__ import annotations

import json

import pytest

from tests.e2e.jobs.cli import Cli

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def test_a_failing_job_on_slurm_gives_its_result_and_its_own_exit_code(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--json", "--job-exit-code", "--cluster", "test", "--name", "slurm-result",
                        "--", "sh", "-c", "echo on-slurm; exit 4", timeout=180)
    assert done.returncode == 4, (done.stdout, done.stderr)
    result = json.loads(done.stdout)
    assert (result["job"], result["cluster"], result["ending"]) == ("slurm-result", "test", "outcome")
    assert result["outcome"]["result"] == "failed"
    assert (result["job_exit_code"], result["job_signal"]) == (4, None)
    assert (result["exit_code"], result["exit_code_from"]) == (4, "job")
    [attempt] = result["attempts"]
    assert attempt["object_id"].isdigit()  # Slurm's own job id, as squeue and sacct show it
    assert attempt["object_id"] == on_slurm.status("slurm-result")["attempts"][0]["object_id"]
    assert attempt["object_id"] in done.stderr  # the live view stayed on stderr
    with open(result["stdout"]) as output:
        assert "on-slurm" in output.read()
    assert result["record"]["store"] == str(on_slurm.root) and result["record"]["backend"] == "sqlite"
