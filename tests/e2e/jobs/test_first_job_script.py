"""The script of docs/first-job.md ("A script that runs a job"), taken from the page as a reader copies
it, run against the local scheduler: it exits as the job did, reading ``submit --json`` with python3."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import DUNSCAITH, Cli

PAGE = Path(__file__).resolve().parents[3] / "docs" / "first-job.md"


def script_of_the_page() -> str:
    section = PAGE.read_text().split("## A script that runs a job", 1)[1]
    found = re.search(r"```sh\n(#!/bin/sh\n.*?)```", section, re.S)
    assert found is not None, "docs/first-job.md has no #!/bin/sh block under 'A script that runs a job'"
    return found.group(1)


@pytest.fixture
def run_job(cli: Cli) -> Path:
    path = cli.tmp / "run-job.sh"
    path.write_text(script_of_the_page())
    path.chmod(0o755)
    return path


def _run(cli: Cli, script: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = cli.env()
    env["PATH"] = f"{Path(DUNSCAITH).parent}{os.pathsep}{env.get('PATH', '')}"  # dunscaith as installed
    return subprocess.run([str(script), *command], env=env, capture_output=True, text=True, timeout=120, cwd=cli.tmp)


@pytest.mark.parametrize(("command", "code", "said"), [
    (["sh", "-c", "echo working; exit 3"], 3, ": failed (failed, exit code 3); objects "),
    (["true"], 0, ": succeeded ("),
    (["sh", "-c", "kill -TERM $$"], 128 + signal.SIGTERM, ": failed ("),
])
def test_the_script_exits_with_the_jobs_own_code(cli: Cli, run_job: Path, command: list[str], code: int,
                                                 said: str) -> None:
    done = _run(cli, run_job, *command)
    assert done.returncode == code, done.stderr
    assert said in done.stderr and "output " in done.stderr
    assert done.stdout == ""  # the object was the script's to read; the live view went to stderr


def test_the_script_says_why_there_was_no_outcome(cli: Cli, run_job: Path) -> None:
    done = _run(cli, run_job)  # no command: refused before anything was recorded
    assert done.returncode == 2
    assert "no outcome: nothing to run" in done.stderr
