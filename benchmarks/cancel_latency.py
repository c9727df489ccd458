"""What a user waits for at the two ends of a local job: ``submit -- true`` to its exit, and a ``cancel``.

Run: .venv/bin/python benchmarks/cancel_latency.py [--runs 5] [--before TREE]

1. ``dunscaith submit -- true`` from start to exit, against ``dunscaith --help`` in the same run (goal:
   at most 3x; issue 26). The median of ``--runs`` each.
2. ``dunscaith cancel JOB`` of a running local ``sleep 300`` with a live supervisor: from the command's
   start to its return, and to the record's ``outcome`` (cancelled) event; the median of ``--runs``
   (issue 24: it returns as soon as the job stopped, and the job's end is recorded within a second).

With ``--before TREE`` (a checkout of another commit, e.g. ``git archive ae20c42 | tar -x -C /tmp/base``)
each figure is measured for it too, in the same run, paired: its ``src`` is put first on PYTHONPATH, so
this virtual environment's interpreter and libraries run that tree's dunscaith (and its local
scheduler's process owners, which inherit the environment). Bytecode is written, as in an installed
dunscaith. Every figure comes from this run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")


def env_for(home: Path, tree: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "DUNSCAITH_RECORDS__ROOT": str(home / "records")})
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "src")
    return env


def timed(argv: Sequence[str], env: dict[str, str], cwd: Path, ok: Sequence[int] = (0,)) -> float:
    started = time.monotonic()
    done = subprocess.run([DUNSCAITH, *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    took = time.monotonic() - started
    if done.returncode not in ok:
        raise SystemExit(f"dunscaith {' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return took


def _state(env: dict[str, str], cwd: Path, job: str) -> str:
    done = subprocess.run([DUNSCAITH, "status", job], env=env, cwd=cwd, capture_output=True, text=True, check=False)
    return done.stdout.split()[1] if done.stdout.split()[1:] else ""


def _outcome_at(home: Path, job: str) -> datetime:
    store = SqliteStore.open(home / "records", SystemHost())
    try:
        record = store.read(JobId(job))
    finally:
        store.close()
    return next(line.at for line in record.events if line.kind == "outcome")


def submit_true(work: Path, tree: Path | None, runs: int) -> tuple[float, float]:
    home = Path(tempfile.mkdtemp(dir=work))
    env = env_for(home, tree)
    ours, helps = [], []
    for i in range(runs + 1):  # the first pair warms the caches (bytecode, the store's migration): dropped
        a = timed(["submit", "--name", f"true-{i}", "--", "true"], env, work)
        b = timed(["--help"], env, work)
        if i:
            ours.append(a)
            helps.append(b)
    return statistics.median(ours), statistics.median(helps)


def cancels(work: Path, tree: Path | None, runs: int) -> tuple[float, float]:
    home = Path(tempfile.mkdtemp(dir=work))
    env = env_for(home, tree)
    returned, recorded = [], []
    for i in range(runs):
        job = f"sleep-{i}"
        supervisor = subprocess.Popen([DUNSCAITH, "submit", "--name", job, "--", "sleep", "300"], env=env, cwd=work,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while _state(env, work, job) != "running":
            if time.monotonic() > deadline:
                raise SystemExit(f"{job} never ran")
            time.sleep(0.2)
        time.sleep(1.0)  # the supervisor asleep to its next look, as a user's would be
        wall = datetime.now(UTC)
        returned.append(timed(["cancel", job], env, work))
        supervisor.wait(timeout=120)
        recorded.append((_outcome_at(home, job) - wall).total_seconds())
    return statistics.median(returned), statistics.median(recorded)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", type=Path, default=None, metavar="TREE")
    args = parser.parse_args()
    trees: list[tuple[str, Path | None]] = [("this", None)]
    if args.before is not None:
        if not (args.before / "src" / "dunscaith").exists():
            parser.error(f"--before {args.before}: no src/dunscaith there")
        trees.append((args.before.name, args.before.resolve()))
    work = Path(tempfile.mkdtemp(prefix="dunscaith-cancel-"))
    try:
        for label, tree in trees:
            mine, help_ = submit_true(work, tree, args.runs)
            back, end = cancels(work, tree, args.runs)
            print(f"{label}: submit -- true {mine:.3f} s, --help {help_:.3f} s: {mine / help_:.1f}x (goal <= 3x); "
                  f"cancel of a running sleep 300: returns in {back:.3f} s, recorded cancelled {end:.3f} s after "
                  f"the command started (medians of {args.runs})", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
