"""dunscaith installed as users install Python tools: a wheel in a fresh virtual environment, no source tree.

The store migrates itself on open, so the migrations must be in the wheel: a wheel without them fails at
the first ``submit`` ("the migrations are not installed").
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]


def _run(*args: str | Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload, no-any-return]


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path  # fresh, with entrypoints==0.4 installed before the wheel, as in an older Jupyter install


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """One wheel built from this tree and installed once into a fresh venv, for every test here (a build
    and an install cost ~10 s each on 2 cores)."""
    tmp = tmp_path_factory.mktemp("wheel")
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp / "dist", REPO)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((tmp / "dist").glob("dunscaith-*.whl"))
    fresh = tmp / "venv"
    venv.create(fresh, with_pip=True)
    before = _run(fresh / "bin" / "python", "-m", "pip", "install", "-q", "entrypoints==0.4")
    assert before.returncode == 0, before.stderr[-2000:]
    done = _run(fresh / "bin" / "python", "-m", "pip", "install", "-q", wheel)
    assert done.returncode == 0, done.stderr[-2000:]
    return Installed(wheel, fresh)


def test_a_wheel_in_a_fresh_venv_submits_a_job_and_knows_its_version(tmp_path: Path, installed: Installed) -> None:
    fresh = installed.venv
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


def test_the_wheel_adds_one_import_name_and_leaves_a_package_named_entrypoints_as_it_was(
        tmp_path: Path, installed: Installed) -> None:
    """An existing environment with ``entrypoints==0.4`` (many older Jupyter installs have it) keeps it:
    before, the wheel put five generic packages (domain, ports, adapters, entrypoints, migrations) into
    site-packages, and ``import entrypoints`` returned dunscaith's."""
    with zipfile.ZipFile(installed.wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"dunscaith"}, tops

    fresh = installed.venv
    python = fresh / "bin" / "python"

    probe = ("import entrypoints, dunscaith.entrypoints.version as v, dunscaith.domain.model.version as d;"
             "print(entrypoints.__file__); print(callable(entrypoints.get_group_all)); print(v.VERSION == d.VERSION)")
    both = _run(python, "-c", probe, cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    where, has_api, same = both.stdout.split()
    assert Path(where).name == "entrypoints.py" and "site-packages" in where  # the module of entrypoints 0.4
    assert (has_api, same) == ("True", "True")
    for generic in ("domain", "ports", "adapters", "migrations"):
        missing = _run(python, "-c", f"import {generic}", cwd=tmp_path)
        assert missing.returncode != 0 and "ModuleNotFoundError" in missing.stderr, generic
    assert _run(python, "-m", "pip", "check").returncode == 0
    version = _run(fresh / "bin" / "dunscaith", "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("dunscaith "), version
