"""The wrapper runs the local scheduler's exec shim in its worker's process (``remote_run.local_shim``)
only when ``execve`` would start this install's shim with this very interpreter (a job with a memory
limit too: the limit is the watchdog's, on the job's resident memory); a job started that way sees what
one started through a new interpreter sees (tests/e2e/jobs/test_first_hour_cli.py: the limits, the
environment, the directory)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.local import spawn
from dunscaith.entrypoints.dunscaith.remote_run import local_shim


def _env_file(tmp_path: Path, limits: dict[str, object]) -> str:
    path = tmp_path / "env.json"
    path.write_text(json.dumps({"env": {"PATH": "/usr/bin:/bin"}, "limits": limits}))
    return str(path)


def test_this_install_s_shim_with_this_interpreter_runs_in_the_worker_s_process(tmp_path: Path) -> None:
    argv = [sys.executable, "-I", "-S", str(spawn.SHIM), _env_file(tmp_path, {"cpus": 1, "time_limit_s": 5.0}),
            "--", "true"]
    assert callable(local_shim(argv, {}))
    assert callable(local_shim([*argv[:6], "sh", "-c", "exit 3"], {}))


@pytest.mark.parametrize("change", [
    lambda a: ["/usr/bin/python3", *a[1:]],  # another interpreter
    lambda a: [a[0], "-S", "-I", *a[3:]],  # other flags
    lambda a: [a[0], "-I", *a[3:], "x"],  # no -S
    lambda a: [*a[:3], str(Path(a[3]).with_name("spawn.py")), *a[4:]],  # another script
    lambda a: [*a[:4], a[4] + ".missing", *a[5:]],  # an environment file that does not read: the shim says so
    lambda a: [*a[:5], "-", *a[6:]],
    lambda a: a[:6],  # no program
    lambda a: ["sh", "-c", "true"],
])
def test_anything_else_is_exec_d(tmp_path: Path, change: object) -> None:
    argv = [sys.executable, "-I", "-S", str(spawn.SHIM), _env_file(tmp_path, {}), "--", "true"]
    assert callable(change)
    assert local_shim(change(argv), {}) is None


def test_a_job_with_a_memory_limit_runs_in_process_and_a_damaged_file_is_exec_d(tmp_path: Path) -> None:
    argv = [sys.executable, "-I", "-S", str(spawn.SHIM), _env_file(tmp_path, {"memory_mb": 64}), "--", "true"]
    assert callable(local_shim(argv, {}))
    (tmp_path / "env.json").write_text("{not json")
    assert local_shim(argv, {}) is None
