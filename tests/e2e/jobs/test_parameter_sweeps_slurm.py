"""Parameter sweeps on the real Slurm 22.05, as a user runs them: one job array, each element its own task,
kill -9 of the supervisor at the steps of an array's way, then ``supervise NAME``; the fallback above the
cluster's MaxArraySize. Skipped, naming what is missing, without the Debian packages."""

from __future__ import annotations

import json
import signal
from collections import Counter

import pytest

from tests.e2e.jobs.cli import Cli, await_condition

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def _ran(cli: Cli) -> Counter[str]:
    path = cli.tmp / "ran"
    return Counter(path.read_text().split()) if path.exists() else Counter()


def _command(cli: Cli) -> list[str]:
    return ["sh", "-c", f"echo {{}} >> {cli.tmp / 'ran'}"]


def _elements(cli: Cli, sweep: str) -> list[dict[str, object]]:
    shown = cli.run("status", sweep, "--json")
    assert shown.returncode in (0, 1, 5), shown.stderr
    return list(json.loads(shown.stdout)["elements"])


def test_a_sweep_on_slurm_is_one_array_each_element_its_own_task(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "arr", "--array", "1-8", "--max-running", "3",
                        "--", *_command(on_slurm), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sweep arr: all 8 succeeded" in done.stdout
    assert "8 elements sent as job array" in done.stdout
    assert _ran(on_slurm) == Counter(str(i) for i in range(1, 9))
    objects = {str(e["job"]): str(e["object_id"]) for e in _elements(on_slurm, "arr")}
    arrays = {oid.split("_")[0] for oid in objects.values()}
    assert len(arrays) == 1 and all(oid.endswith(f"_{job.split('-')[1]}") for job, oid in objects.items())


def test_a_failed_task_is_its_elements_failure(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "arf", "--array", "1-4", "--",
                        "sh", "-c", "test {} -ne 3", timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "sweep arf: 3 succeeded, 1 failed: arf-3" in done.stderr


def test_above_the_clusters_array_size_it_says_so_and_sends_one_job_per_element(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "big", "--array", "1000-1002", "--",
                        *_command(on_slurm), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not one job array" in done.stdout and "one held job per element" in done.stdout
    assert _ran(on_slurm) == Counter({"1000": 1, "1001": 1, "1002": 1})


# The steps of an array's way: every element's "submitting" (one transaction), the one sbatch, every answer
# (one transaction), the one release of the array, every "released" (one transaction), then the observations
# and outcomes, element by element (a few reached mid-way). A phase's events are one commit: no point falls
# between two elements' events of it any more. Before all of them, every element's first pointer (written
# together: one sync for the batch) and its index entry: "pointer-indexed" falls between the entries and the
# pointers, nothing recorded of an attempt yet.
CRASHES = ["pointer-indexed", "submitting-committed", "create-answered", "answer-committed", "release-sent",
           "release-committed", "observation-committed#4", "outcome-committed#2"]


@pytest.mark.parametrize("point", CRASHES)
def test_kill_9_on_the_way_of_an_array_then_supervise_runs_every_element_once(on_slurm: Cli, point: str) -> None:
    first = on_slurm.run("submit", "--cluster", "test", "--name", "k9", "--array", "1-5", "--",
                         *_command(on_slurm), timeout=300, DUNSCAITH_TEST_CRASH_AT=point)
    assert first.returncode == -signal.SIGKILL, first.stdout + first.stderr
    again = on_slurm.run("supervise", "k9", timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    await_condition(lambda: sum(_ran(on_slurm).values()) >= 5, timeout=60, what="every element to have run")
    assert _ran(on_slurm) == Counter(str(i) for i in range(1, 6)), point
    assert all(e["state"] == "succeeded" for e in _elements(on_slurm, "k9"))


def test_a_script_sweep_whose_sbatch_lines_differ_is_one_held_job_per_element(on_slurm: Cli) -> None:
    # {} in an #SBATCH line: each element asks its own time limit, which one array's options cannot carry
    script = on_slurm.tmp / "step.sh"
    script.write_text(f"#!/bin/sh\n#SBATCH --time={{}}\necho {{}} >> {on_slurm.tmp / 'ran'}\n")
    done = on_slurm.run("submit", "--cluster", "test", "--name", "opt", "--array", "1-3", str(script), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not one job array (the elements' scripts carry different #SBATCH lines" in done.stdout
    assert "one held job per element" in done.stdout
    assert _ran(on_slurm) == Counter({"1": 1, "2": 1, "3": 1})
    objects = [str(e["object_id"]) for e in _elements(on_slurm, "opt")]
    assert all("_" not in oid for oid in objects)  # jobs of their own, not an array's tasks
