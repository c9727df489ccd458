"""`dunscaith remote run` starts every local job: it imports the wrapper, not the CLI framework or the jobs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.remote.conftest import DUNSCAITH, read_json

pytestmark = pytest.mark.slow

NOT_FOR_THE_WRAPPER = ("typer", "click", "pydantic", "pydantic_settings", "dependency_injector", "asyncio", "ssl",
                       "sqlalchemy", "rich", "httpx", "dunscaith.domain.model.jobs", "dunscaith.domain.services.jobs")


def _imported(stderr: str) -> set[str]:
    """The modules named by ``-X importtime`` lines (PYTHONPROFILEIMPORTTIME) in ``stderr``."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_run_imports_neither_the_cli_framework_nor_the_job_machinery(tmp_path: Path) -> None:
    d = tmp_path / "inst"
    done = subprocess.run([DUNSCAITH, "remote", "run", "--instance-dir", str(d), "--", "true"], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode == 0 and read_json(d / "outcome.json")["exit_code"] == 0
    modules = _imported(done.stderr)
    assert "dunscaith.adapters.process.wrapper" in modules
    unwanted = sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in NOT_FOR_THE_WRAPPER))
    assert unwanted == []


def test_help_and_usage_errors_of_run_read_as_the_app_writes_them() -> None:
    shown = subprocess.run([DUNSCAITH, "remote", "run", "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "--instance-dir" in shown.stdout and "--env-file" in shown.stdout
    wrong = subprocess.run([DUNSCAITH, "remote", "run", "--no-such-option", "x"], capture_output=True, text=True,
                           timeout=60)
    assert (wrong.returncode, wrong.stderr) == (2, "dunscaith: No such option: --no-such-option\n")
