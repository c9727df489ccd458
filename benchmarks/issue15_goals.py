"""Every goal of issue 15 ("fast at any size") and of issue 26 ("fast where users wait") measured in one run,
one after another, with a table.

Runs the benchmarks that measure each goal (their whole output is shown as it comes), then prints one
line per goal: the figure, the goal, met or not. The figures are the benchmarks' own, read from what
they print; nothing here measures anything. The summary == fold property is the test suite's
(tests/contract/test_job_summary.py, on memory, SQLite and PostgreSQL), run here too. The slow parts
are the 100k-job stores (built once by store_scale.py and kept under its --stores) and the real Slurm
(root; skipped, and said so, without it).

    .venv/bin/python benchmarks/issue15_goals.py                  # about 25 minutes on 2 cores
    .venv/bin/python benchmarks/issue15_goals.py --quick --only supervisor_cpu
    .venv/bin/python benchmarks/issue15_goals.py --before ../base  # each benchmark run in both trees, paired

With ``--before TREE`` (another checkout with its own ``.venv``, e.g. ``git worktree add ../base 21d1aaf``
and its ``tests/run --version``), each benchmark runs in this tree and then in TREE, from TREE's own
benchmark scripts and virtual environment, one right after the other, so both see the same machine; the
table shows both figures. Each tree keeps its own large stores (a newer schema is refused by an older build).
A benchmark the earlier tree does not have is measured for it in the same run all the same: ``startup.py``
runs both trees in the same rounds (its own ``--before``: TREE's console script), and ``store_wake.py`` is run
by TREE's interpreter with ``--generic-names`` (a tree from before the one import name, as 21d1aaf is).
Issue 26 asks for its goals beside 21d1aaf's figures from the same run:

    git worktree add --detach ../base 21d1aaf && (cd ../base && tests/run --version)
    .venv/bin/python benchmarks/issue15_goals.py --before ../base --stores /var/tmp/dunscaith-stores
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass(frozen=True)
class Goal:
    name: str
    script: str  # which run prints it
    pattern: str  # a regex whose first group is the figure (the last match counts)
    met: Callable[[float], bool]
    shown: str  # the goal, as the issue says it


GOALS = [
    Goal("status JOB at 100k jobs / at 1 job", "store_scale",
         r"status \S+\s+\(baseline.*?\n(?:.*\n)*?\s+100000 jobs:.*ratio ([\d.]+)", lambda x: x <= 1.2, "<= 1.2"),
    Goal("list --limit 50 at 100k / at 1k", "store_scale",
         r"list --limit 50 .*?\n(?:.*\n)*?\s+100000 jobs:.*ratio ([\d.]+)", lambda x: x <= 1.5, "<= 1.5"),
    Goal("list --json of 100k jobs, peak RSS MiB", "store_scale",
         r"list --json.*\n(?:.*\n)*?\s+100000 jobs:.*peak RSS\s+([\d.]+) MiB", lambda x: x <= 100, "<= 100 MiB"),
    Goal("dunscaith --help / import typer", "store_scale", r"dunscaith --help\s+\d+ ms\s+ratio ([\d.]+)",
         lambda x: x <= 1.5, "<= 1.5"),
    Goal("qdevices --help / import typer", "store_scale", r"qdevices --help\s+\d+ ms\s+ratio ([\d.]+)",
         lambda x: x <= 1.5, "<= 1.5"),
    Goal("status of a 100k-event record / a 10-event one", "status_long_record",
         r"status,\s+100,000 observ.*?wall\s+\d+ ms \(\s*([\d.]+)x\)", lambda x: x <= 2.0, "<= 2"),
    Goal("status of 10k request pairs / a 10-event one", "status_long_record",
         r"status,\s+10,000 request pairs.*?wall\s+\d+ ms \(\s*([\d.]+)x\)", lambda x: x <= 2.0, "<= 2"),
    # status_long_record.py prints the CPU per pair at 10k over that at 1k: ~1 is linear, ~10 quadratic
    Goal("request pairs: CPU per pair, 10k / 1k pairs", "status_long_record",
         r"(?:([\d.]+)x per pair for 10x the pairs|cost (no more) CPU than none)", lambda x: x < 10.0,
         "< 10 (not quadratic)"),
    Goal("wrapper throughput / cat, into a pipe", "remote_throughput",
         r"\n  pipe\s+cat.*ratio wrapper/cat ([\d.]+)", lambda x: x >= 0.8, ">= 0.8"),
    Goal("wrapper throughput / cat, onto a file", "remote_throughput",
         r"\n  file\s+cat.*ratio wrapper/cat ([\d.]+)", lambda x: x >= 0.8, ">= 0.8"),
    Goal("wrapper throughput / cat, onto /dev/null", "remote_throughput",
         r"\n  /dev/null\s+cat.*ratio wrapper/cat ([\d.]+)", lambda x: x >= 0.8, ">= 0.8"),
    Goal("remote run -- true over python -c pass, ms", "remote_throughput",
         r"overhead over python -c pass:\s+([\d.]+) ms", lambda x: x <= 150, "<= 150 ms"),
    Goal("idle wrapper CPU, s per hour", "wrapper_idle", r"\n  watched\s+([\d.]+) s CPU per hour",
         lambda x: x <= 0.05, "<= 0.05 s"),
    Goal("supervisor CPU per hour, local job, s", "supervisor_cpu",
         r"local scheduler .*\n.*a query every loop, no backoff\): ([\d.]+) s CPU per supervised hour",
         lambda x: x <= 0.3, "<= 0.3 s"),
    Goal("supervisor CPU, real Slurm, first hour, s", "supervisor_cpu",
         r"this tree .*\n.*\n.*first hour ([\d.]+) s CPU", lambda x: x <= 0.3, "<= 0.3 s"),
    Goal("supervisor CPU, real Slurm, each later hour, s", "supervisor_cpu",
         r"this tree .*\n.*\n.*each later hour ([\d.]+) s", lambda x: x <= 0.3, "<= 0.3 s"),
    Goal("Slurm calls per poll interval, 100 jobs", "slurm_calls", r"\n\s+100 \|\s+([\d.]+) ",
         lambda x: x <= 1, "1 (not worse)"),
    Goal("summary == fold: tests failed (3 stores)", "property", "", lambda x: x == 0, "0"),
    # issue 26's store goals (store_wake.py)
    Goal("cancel to a PostgreSQL supervisor asleep, ms", "store_wake", r"asleep \(PostgreSQL\): (\d+) ms to its answer",
         lambda x: x <= 1000, "<= 1000 ms"),
    Goal("notice on PostgreSQL: status at 10k / 10 unsettled", "store_wake",
         r"status with the notice, PostgreSQL:.*ratio ([\d.]+)", lambda x: x <= 1.2, "<= 1.2"),
    Goal("append beside 100k / 10 events, PostgreSQL", "store_wake",
         r"append by a new handle, PostgreSQL:.*ratio ([\d.]+)", lambda x: x <= 1.5, "<= 1.5"),
    Goal("append beside 100k / 10 events, SQLite", "store_wake",
         r"append by a new handle, SQLite:.*ratio ([\d.]+)", lambda x: x <= 1.5, "<= 1.5"),
    # issue 26's start-up goals and issue 24's completion (startup.py)
    Goal("status JOB / python -c 'import typer'", "startup", r"\n  status JOB\s+\d+ ms\s+ratio\s+([\d.]+)",
         lambda x: x <= 2.5, "<= 2.5"),
    Goal("list / python -c 'import typer'", "startup", r"\n  list\s+\d+ ms\s+ratio\s+([\d.]+)",
         lambda x: x <= 2.5, "<= 2.5"),
    Goal("--version / python -c pass", "startup", r"\n  --version\s+\d+ ms\s+ratio\s+([\d.]+)",
         lambda x: x <= 2.0, "<= 2"),
    Goal("remote run -- true / python -c pass", "startup",
         r"\n  remote run -- true\s+\d+ ms\s+ratio\s+([\d.]+)", lambda x: x <= 3.0, "<= 3"),
    Goal("submit -- true, to its outcome / dunscaith --help", "startup",
         r"\n  submit -- true\s+\d+ ms\s+ratio\s+([\d.]+)", lambda x: x <= 3.0, "<= 3"),
    Goal("a completion request (status <TAB>), ms", "startup", r"\n  completion: status <TAB>\s+(\d+) ms",
         lambda x: x < 300, "< 300 ms (quiet)"),
]

# Benchmarks an earlier tree may not have, and how its figures are measured then in the same run:
# startup.py runs both trees in the same rounds (its --before), each of that tree's lines labelled with its
# name; store_wake.py is run by that tree's own interpreter, importing it under its older names.
PAIRED_INSIDE = {"startup"}
RUN_BY_BEFORE = {"store_wake": ["--generic-names"]}


def _paired_pattern(pattern: str, tree: str) -> str:
    """A goal's pattern for the line startup.py prints for the tree ``tree``: "    TREE: status JOB ..."."""
    return pattern.replace(r"\n  ", rf"\n    {re.escape(tree)}: ", 1)


def _runs(args: argparse.Namespace, root: Path = ROOT, py: str = sys.executable,
          stores: Path | None = None) -> dict[str, list[str]]:
    """Each benchmark's command line, for the tree ``root`` run by its interpreter ``py``."""
    here = root / "benchmarks"
    kept = ["--stores", str(stores)] if stores else []
    quick = args.quick
    return {
        "store_scale": [py, str(here / "store_scale.py"), "--runs", "3" if quick else "5", *kept],
        "status_long_record": [py, str(here / "status_long_record.py"), "--runs", "3" if quick else "5"],
        "remote_throughput": [py, str(here / "remote_throughput.py"), "--pairs", "3" if quick else "5"],
        "wrapper_idle": [py, str(here / "wrapper_idle.py"), "--seconds", "30" if quick else "60"],
        "supervisor_cpu": [py, str(here / "supervisor_cpu.py"), "--slurm", "240" if quick else "300"],
        "slurm_calls": [py, str(here / "slurm_calls.py")],
        "store_wake": [py, str(here / "store_wake.py"), "--runs", "3" if quick else "5"],
        "startup": [py, str(here / "startup.py"), "--runs", "3" if quick else "7"],
        "property": [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "-k", "fold",
                     str(root / "tests" / "contract" / "test_job_summary.py")],
    }


def _run(label: str, name: str, command: list[str], cwd: Path) -> str:
    print(f"\n===== {label}{name}: {' '.join(command[1:])}   (load average {os.getloadavg()[0]:.2f})", flush=True)
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        lines.append(line)
    proc.wait()
    return "".join(lines)


def _figure(goal: Goal, output: str) -> float | None:
    if goal.script == "property":
        failed = re.search(r"(\d+) failed", output)
        return float(failed.group(1)) if failed else (0.0 if re.search(r"\d+ passed", output) else None)
    found = list(re.finditer(goal.pattern, output))
    if not found:
        return None
    figure = next((group for group in found[-1].groups() if group is not None), None)
    if figure == "no more":  # the pairs cost nothing measurable over none: linear at any count
        return 1.0
    try:
        return float(figure) if figure is not None else None
    except ValueError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=Path, default=None, help="keep the large stores here (store_scale.py)")
    parser.add_argument("--quick", action="store_true", help="fewer runs of each (noisier figures)")
    parser.add_argument("--only", action="append", default=[], help="run only this benchmark (repeatable)")
    parser.add_argument("--before", type=Path, default=None, metavar="TREE",
                        help="another checkout (with its .venv) whose benchmarks run paired with this tree's")
    args = parser.parse_args()
    before = args.before.resolve() if args.before else None
    if before is not None and not (before / ".venv" / "bin" / "python").exists():
        parser.error(f"--before {before}: no .venv there (make it with its tests/run --version)")
    outputs: dict[str, str] = {}
    earlier: dict[str, str] = {}
    began = time.monotonic()
    stores = args.stores
    ours = _runs(args, stores=stores)
    theirs = _runs(args, before, str(before / ".venv" / "bin" / "python"),
                   (stores.parent / (stores.name + "-before")) if stores else None) if before else {}
    for name, command in ours.items():
        if args.only and name not in args.only:
            continue
        script = Path(theirs[name][1]) if before is not None else None
        missing = before is not None and script is not None and script.suffix == ".py" and not script.exists()
        if before is not None and missing and name in PAIRED_INSIDE:
            outputs[name] = earlier[name] = _run("", name, [*command, "--before", str(before)], ROOT)
            continue
        outputs[name] = _run("", name, command, ROOT)
        if before is not None and missing and name in RUN_BY_BEFORE:
            theirs_py = str(before / ".venv" / "bin" / "python")
            earlier[name] = _run(f"{before.name}: ", name, [theirs_py, *command[1:], *RUN_BY_BEFORE[name]], ROOT)
        elif before is not None and not missing:
            earlier[name] = _run(f"{before.name}: ", name, theirs[name], before)
    print(f"\n===== issue 15's and issue 26's goals, one run ({(time.monotonic() - began) / 60:.1f} min, "
          f"load average now {os.getloadavg()[0]:.2f})")
    if before is not None:
        print(f"  {'':<52} {'this':>9}   {before.name:>9}")
    unmet = 0
    for goal in GOALS:
        if goal.script not in outputs:
            continue
        figure = _figure(goal, outputs[goal.script])
        verdict = "not printed" if figure is None else ("met" if goal.met(figure) else "NOT MET")
        unmet += verdict != "met"
        shown = "—" if figure is None else f"{figure:g}"
        beside = ""
        if before is not None:
            theirs_goal = (Goal(goal.name, goal.script, _paired_pattern(goal.pattern, before.name), goal.met,
                                goal.shown) if goal.script in PAIRED_INSIDE else goal)
            old = _figure(theirs_goal, earlier.get(goal.script, ""))
            beside = f"   {'—' if old is None else f'{old:g}':>9}"
        print(f"  {goal.name:<52} {shown:>9}{beside}   goal {goal.shown:<18} {verdict}")
    print(f"  {'every goal met' if unmet == 0 else f'{unmet} goal(s) not met or not printed'}")
    return 0 if unmet == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
