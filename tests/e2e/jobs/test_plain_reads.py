"""Issue 26, then 37: a plain ``status``/``list`` run by the console script (the front door, then typer, which
parses every line since issue 37: the hand parser ``reads.py`` is gone) prints, on stdout and stderr, and
exits as the typer app run by itself for the same line, word for word.

Each line runs twice: as the user runs it (the console script: its front door) and through the app itself
(``app.main``). Only what the clock moves between the two runs is set aside: a table's AGE cells and the
spaces that pad them, a running job's elapsed time, and when its scheduler was asked.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from typing import Any

import pytest

from tests.e2e.jobs.cli import Cli, await_state

pytestmark = pytest.mark.slow

APP = ("import sys; sys.argv[0] = 'dunscaith'\n"
       "from dunscaith.entrypoints.dunscaith.app import main\n"
       "main()\n")
_AGE = re.compile(r"(?<![\w:.-])\d+[smhd](?![\w:.-])")
_ELAPSED = re.compile(r"(?<![\d:])\d+:\d\d(?![\d:])")  # 0:03, as elapsed shows it (never a clock time)
_MOVING = {"elapsed_seconds", "asked_at"}  # a running job's: what the clock moves between the two runs


def _by_app(cli: Cli, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", APP, *args], env=cli.env(**env), capture_output=True, text=True,
                          timeout=90, cwd=cli.tmp)


def _steady(text: str) -> str:
    lines = (" ".join(_ELAPSED.sub("ELAPSED", _AGE.sub("AGE", line)).split()) for line in text.splitlines())
    return "\n".join(lines)


def _steady_json(text: str) -> Any:
    def drop(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: drop(v) for k, v in value.items() if k not in _MOVING}
        if isinstance(value, list):
            return [drop(v) for v in value]
        return value

    return drop(json.loads(text))


def _same(cli: Cli, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``args`` both ways; assert they print and exit alike; the front door's run."""
    plain, by_app = cli.run(*args, env=env), _by_app(cli, *args, **env)
    assert "Traceback" not in plain.stderr + by_app.stderr
    assert (plain.returncode, _steady(plain.stderr)) == (by_app.returncode, _steady(by_app.stderr))
    if "--json" in args:
        assert _steady_json(plain.stdout) == _steady_json(by_app.stdout)
    else:
        assert _steady(plain.stdout) == _steady(by_app.stdout)
    return plain


@pytest.fixture
def jobs(cli: Cli) -> Cli:
    assert cli.run("submit", "--name", "fine", "--", "true").returncode == 0
    assert cli.run("submit", "--name", "fails", "--", "sh", "-c", "exit 3").returncode == 1
    cli.pointer_of_another_host("far", "running")  # another host's job: list shows it from its pointer
    damaged = cli.tmp / "home" / ".config" / "dunscaith" / "jobs" / "broken"
    damaged.write_text("{not a pointer")  # notices and list report it
    return cli


LINES = [
    ("status", "fine"), ("status", "fine", "--json"), ("status", "--json", "fine"),
    ("status", "fails"), ("status", "fails", "--json"),
    ("status", "nothing-here"), ("status", "nothing-here", "--json"),
    ("status",), ("status", "--json"), ("list",), ("list", "--json"),
]


@pytest.mark.parametrize("line", LINES, ids=" ".join)
def test_a_plain_read_prints_and_exits_as_the_app(jobs: Cli, line: tuple[str, ...]) -> None:
    _same(jobs, *line)


def test_the_same_without_colour_and_for_a_missing_job_the_same_refusal(jobs: Cli) -> None:
    missing = _same(jobs, "status", "nothing-here", "--json", NO_COLOR="1")
    assert missing.returncode == 2 and json.loads(missing.stdout)["error"]["code"] == "bad-input"
    assert _same(jobs, "status", "fails", NO_COLOR="1").returncode == 1
    _same(jobs, "list", NO_COLOR="1")


def test_a_store_that_refuses_refuses_alike(cli: Cli) -> None:
    cli.root.mkdir(mode=0o700)
    (cli.root / "HOST").write_text("not a host file")  # not this host's root: refused with one line, exit 2
    refused = _same(cli, "status", "fine")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    _same(cli, "list", "--json")


def test_an_unattended_job_s_notice_and_live_view_are_the_apps(cli: Cli) -> None:
    supervisor = cli.start("submit", "--name", "alone", "--", "sleep", "120")
    await_state(cli, "alone", "running", timeout=120)
    os.killpg(supervisor.pid, signal.SIGKILL)
    supervisor.wait()
    try:
        assert cli.run("submit", "--name", "fine", "--", "true").returncode == 0
        assert "Unattended" in _same(cli, "status", "fine").stderr  # the notice, about the other job
        assert "Unattended" in _same(cli, "status", "alone").stdout
        _same(cli, "status", "alone", "--json")
        _same(cli, "list")
        _same(cli, "list", "--json")
    finally:
        cli.run("stop", "--emergency", "alone")


def test_a_wrong_setting_is_refused_alike_and_a_changed_one_is_read_again(cli: Cli) -> None:
    config = cli.tmp / "home" / ".config" / "dunscaith" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[supervise]\npoll = -1\n")
    refused = _same(cli, "status", "fine", "--json")
    assert refused.returncode == 2 and "supervise.poll" in refused.stderr
    _same(cli, "list")
    config.write_text('[records]\nbackend = "sqlite"\n')  # valid again: validated, remembered, the same
    _same(cli, "list")
    _same(cli, "list")


def test_a_sweep_s_status_and_its_row_are_the_apps(cli: Cli) -> None:
    done = cli.run("submit", "--name", "exp", "--array", "1-3", "--", "sh", "-c", "test {} -ne 2")
    assert done.returncode == 1, done.stderr  # element 2 failed
    assert _same(cli, "status", "exp").returncode == 1  # the sweep's counts and its failed element
    _same(cli, "status", "exp", "--json")
    _same(cli, "status", "exp-2")
    _same(cli, "list")
    _same(cli, "list", "--json")


@pytest.mark.slurm
def test_a_slurm_job_s_status_asks_its_scheduler_as_the_app_does(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "on-slurm", "--", "true", timeout=180)
    assert done.returncode == 0, (done.stdout, done.stderr)
    shown = _same(on_slurm, "status", "on-slurm")
    assert "scheduler (" in shown.stdout  # its times, as the cluster's accounting gives them
    _same(on_slurm, "status", "on-slurm", "--json")
    _same(on_slurm, "list")
