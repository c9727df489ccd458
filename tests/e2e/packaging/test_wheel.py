"""dunscaith installed as users install Python tools: a wheel in a fresh virtual environment, no source tree.

The store migrates itself on open, so the migrations must be in the wheel: a wheel without them fails at
the first ``submit`` ("the migrations are not installed").
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]


def _run(*args: str | Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload, no-any-return]


def test_a_wheel_in_a_fresh_venv_submits_a_job_and_knows_its_version(tmp_path: Path) -> None:
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", REPO)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("dunscaith-*.whl"))
    fresh = tmp_path / "venv"
    venv.create(fresh, with_pip=True)
    installed = _run(fresh / "bin" / "python", "-m", "pip", "install", "-q", wheel)
    assert installed.returncode == 0, installed.stderr[-2000:]

    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               DUNSCAITH_RECORDS__ROOT=str(tmp_path / "records"), DUNSCAITH_SUPERVISE__POLL="0.2")
    elsewhere = tmp_path / "elsewhere"  # not the source tree: nothing may be read from a clone
    elsewhere.mkdir()
    dunscaith = fresh / "bin" / "dunscaith"
    done = _run(dunscaith, "submit", "--name", "from-wheel", "--", "true", env=env, cwd=elsewhere)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "outcome: succeeded" in done.stdout
    version = _run(dunscaith, "--version", env=env, cwd=elsewhere)
    assert version.returncode == 0 and version.stdout.startswith("dunscaith 0."), version
    qdevices = _run(fresh / "bin" / "qdevices", "--version", env=env, cwd=elsewhere)
    assert qdevices.returncode == 0 and qdevices.stdout.startswith("qdevices "), qdevices
