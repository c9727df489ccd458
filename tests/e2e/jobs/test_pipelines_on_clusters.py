"""Pipelines on the real Slurm 22.05 and the real Grid Engine, as a user runs them: a sweep -> reduce -> plot
file in one terminal, every step created once and only after what it waits for succeeded (each command
checks the files of the step before it); ``submit --after`` across two terminals. Skipped, naming what is
missing, without the Debian packages."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli, await_condition
from tests.e2e.jobs.test_gridengine import on_sge, sge  # noqa: F401 - the fixtures a Grid Engine test takes

pytestmark = [pytest.mark.slow]


def _pipeline(cli: Cli, name: str, elements: int = 3, fails: int | None = None) -> Path:
    """A sweep writing one file an element, a reduce that fails unless every one is there, a plot after it;
    each step notes its run in ``ran`` (one line a run)."""
    out, ran = cli.tmp / "out", cli.tmp / "ran"
    out.mkdir(exist_ok=True)
    last = elements - 1
    every = " && ".join(f"test -f {out}/{i}" for i in range(elements))
    first = "" if fails is None else f"test {{}} -ne {fails} && "  # element ``fails`` exits 1
    text = f"""
name = "{name}"
cluster = "test"

[[step]]
name = "train"
command = ["sh", "-c", "{first}echo {{}} > {out}/{{}} && echo train-{{}} >> {ran}"]
array = "0-{last}"

[[step]]
name = "reduce"
command = ["sh", "-c", "{every} && cat {out}/* > {out}/summary && echo reduce >> {ran}"]
after = ["train"]

[[step]]
name = "plot"
command = ["sh", "-c", "test -s {out}/summary && echo plot >> {ran}"]
after = ["reduce"]
"""
    path = cli.tmp / f"{name}.toml"
    path.write_text(text)
    return path


def _ran(cli: Cli) -> Counter[str]:
    path = cli.tmp / "ran"
    return Counter(path.read_text().split()) if path.exists() else Counter()


def _sweep_reduce_plot_runs_once_each(cli: Cli) -> None:
    done = cli.run("submit", "--pipeline", str(_pipeline(cli, "study")), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _ran(cli) == Counter({"train-0": 1, "train-1": 1, "train-2": 1, "reduce": 1, "plot": 1})
    assert "pipeline study: all 3 steps succeeded" in done.stdout + done.stderr


@pytest.mark.slurm
def test_a_sweep_then_its_reduce_then_a_plot_on_slurm_in_one_terminal(on_slurm: Cli) -> None:
    _sweep_reduce_plot_runs_once_each(on_slurm)


@pytest.mark.slurm
def test_after_across_two_terminals_on_slurm(on_slurm: Cli) -> None:
    ran = on_slurm.tmp / "ran"
    first = on_slurm.start("submit", "--cluster", "test", "--name", "first", "--", "sh", "-c",
                           f"sleep 5 && echo first >> {ran}")
    try:
        await_condition(lambda: on_slurm.run("status", "first").returncode != 2, 60, "first to be recorded")
        second = on_slurm.run("submit", "--cluster", "test", "--name", "second", "--after", "first", "--",
                              "sh", "-c", f"grep -q first {ran} && echo second >> {ran}", timeout=600)
        assert second.returncode == 0, second.stdout + second.stderr
        assert "waiting for first" in second.stdout + second.stderr
    finally:
        first.wait(timeout=600)
    assert first.returncode == 0
    assert _ran(on_slurm) == Counter({"first": 1, "second": 1})


def test_a_sweep_then_its_reduce_then_a_plot_on_grid_engine(on_sge: Cli) -> None:  # noqa: F811
    _sweep_reduce_plot_runs_once_each(on_sge)


def test_a_failed_element_blocks_the_rest_on_grid_engine_and_nothing_is_created_for_it(on_sge: Cli) -> None:  # noqa: F811
    path = _pipeline(on_sge, "broken", fails=1)
    done = on_sge.run("submit", "--pipeline", str(path), timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "reduce blocked" in done.stderr or "reduce blocked" in done.stdout
    assert "reduce" not in _ran(on_sge) and "plot" not in _ran(on_sge)
    shown = on_sge.run("status", "broken.reduce")
    assert "blocked by broken.train" in shown.stdout + shown.stderr
