"""Start-up of the commands a user waits on, each against the tool beside it, measured in the same run.

Issue 26's goals (ratios of medians, each figure paired and interleaved with its baseline):

    status JOB (a 1-job store)     / python -c 'import typer'   <= 2.5
    list (1 job)                   / python -c 'import typer'   <= 2.5
    --version                      / python -c pass             <= 2
    remote run -- true             / python -c pass             <= 3
    submit -- true (local, to its outcome) / dunscaith --help    <= 3

and issue 24's completion of names: one completion request (what a shell sends on TAB, click's protocol:
``_DUNSCAITH_COMPLETE=complete_bash`` ...) for ``dunscaith status <TAB>``, against ``python -c pass``
(goal: under 0.3 s on a quiet machine).

Everything runs in a throwaway HOME and record root, one local job recorded first. Bytecode is written
(PYTHONDONTWRITEBYTECODE unset) and each command runs once before the timing, as an installed dunscaith
runs. The machine is shared: the load average is printed beside the figures.

    .venv/bin/python benchmarks/startup.py                 # 7 rounds
    .venv/bin/python benchmarks/startup.py --runs 5 --before ../base   # and another source tree, paired

``--before TREE``: another tree, in the same rounds, one figure beside each of this tree's: its own console
script when it has a virtual environment (``git worktree add ../base 21d1aaf`` and its ``tests/run
--version``; a tree from before the one import name ``dunscaith`` must be run so), else its source run by
this interpreter with ``PYTHONPATH=TREE/src`` (e.g. ``git archive COMMIT | tar -x -C ../base``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
FRONT_DOOR = ("import sys; sys.argv[0] = 'dunscaith'; "
              "from dunscaith.entrypoints.dunscaith.front_door import main; sys.exit(main())")


@dataclass(frozen=True)
class Case:
    name: str
    words: list[str]  # dunscaith's arguments
    baseline: str  # which baseline (a key of BASELINES)
    goal: float  # ratio at most
    env: dict[str, str] | None = None  # besides the run's own


BASELINES = {"import typer": [PY, "-c", "import typer"], "python -c pass": [PY, "-c", "pass"],
             "dunscaith --help": [str(Path(PY).parent / "dunscaith"), "--help"]}


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(argv: list[str], env: dict[str, str], cpu: list[float] | None = None) -> float:
    start, start_cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    took = time.perf_counter() - start
    if cpu is not None:
        cpu.append(_children_cpu() - start_cpu)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[-4:])} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return took


def _own_build(tree: Path) -> bool:
    return (tree / ".venv" / "bin" / "dunscaith").exists()


def _dunscaith(tree: Path | None, words: list[str]) -> tuple[list[str], dict[str, str]]:
    """The command line of dunscaith ``words`` from this tree (the console script) or ``tree``'s: its own
    console script when it has a ``.venv`` (as a user runs it; a tree from before the one import name has
    no ``src``), else its ``src`` first on PYTHONPATH."""
    if tree is None:
        return [str(Path(PY).parent / "dunscaith"), *words], {}
    if _own_build(tree):
        return [str(tree / ".venv" / "bin" / "dunscaith"), *words], {}
    return [PY, "-c", FRONT_DOOR, *words], {"PYTHONPATH": str(tree / "src")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds (each command and its baseline, paired)")
    parser.add_argument("--before", type=Path, default=None, metavar="TREE",
                        help="another tree (its .venv's console script, else PYTHONPATH=TREE/src), in the same rounds")
    args = parser.parse_args()
    before = args.before.resolve() if args.before else None
    scratch = Path(tempfile.mkdtemp(prefix="dunscaith-startup-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    env.update(HOME=str(scratch / "home"), DUNSCAITH_RECORDS__ROOT=str(scratch / "records"), NO_COLOR="1")
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("XDG_CACHE_HOME", None)
    try:
        (scratch / "home").mkdir(mode=0o700)
        (scratch / "submit-home").mkdir(mode=0o700)
        dunscaith = str(Path(PY).parent / "dunscaith")
        subprocess.run([dunscaith, "submit", "--name", "bench-job", "--", "true"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        completion = {"_DUNSCAITH_COMPLETE": "complete_bash", "COMP_WORDS": "dunscaith status ", "COMP_CWORD": "2"}
        cases = [
            Case("status JOB", ["status", "bench-job"], "import typer", 2.5),
            Case("list", ["list"], "import typer", 2.5),
            Case("--version", ["--version"], "python -c pass", 2.0),
            Case("remote run -- true", ["remote", "run", "--instance-dir", "", "--", "true"], "python -c pass", 3.0),
            Case("completion: status <TAB>", [], "python -c pass", 0.0, completion),
            # a whole local job, foreground, to its outcome: the record, the wrapper, the job, the end; in a
            # home and record root of its own, so that the jobs it adds change no other figure
            Case("submit -- true", ["submit", "--", "true"], "dunscaith --help", 3.0,
                 {"HOME": str(scratch / "submit-home"), "DUNSCAITH_RECORDS__ROOT": str(scratch / "submit-records")}),
        ]
        trees: list[Path | None] = [None] if before is None else [None, before]
        serial = iter(range(1_000_000))

        def line(case: Case, tree: Path | None) -> tuple[list[str], dict[str, str]]:
            words = [w if w != "" else str(scratch / f"instance-{next(serial)}") for w in case.words]
            argv, extra = _dunscaith(tree, words)
            merged = {**env, **extra, **(case.env or {})}
            if tree is not None and _own_build(tree):
                # an older build refuses a store a newer one made: its own homes and record roots
                for key in ("HOME", "DUNSCAITH_RECORDS__ROOT"):
                    merged[key] = f"{merged[key]}-{tree.name}"
            if tree is not None:
                # its own settings cache: the remembered answer's key digests the validating files' inode and
                # mtime too, so two trees sharing one cache would each find the other's and validate anew
                # (one per home: the key digests HOME too)
                merged["XDG_CACHE_HOME"] = str(Path(merged["HOME"]) / f".cache-{tree.name}")
            return argv, merged

        for tree in trees:
            if tree is not None and _own_build(tree):
                for home in ("home", "submit-home"):
                    (scratch / f"{home}-{tree.name}").mkdir(mode=0o700)
                argv, merged = line(Case("", ["submit", "--name", "bench-job", "--", "true"], "", 0.0), tree)
                subprocess.run(argv, env=merged, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        for case in cases:  # warm: bytecode written, the settings remembered, the page cache filled
            for tree in trees:
                _timed(*line(case, tree))
        for baseline in BASELINES.values():
            _timed(baseline, env)
        load_before = os.getloadavg()
        figures: dict[tuple[str, Path | None], list[float]] = {}
        baselines: dict[str, list[float]] = {name: [] for name in BASELINES}
        # CPU seconds (user + system) of the same runs: what a loaded machine changes least
        figures_cpu: dict[tuple[str, Path | None], list[float]] = {}
        baselines_cpu: dict[str, list[float]] = {name: [] for name in BASELINES}
        for _ in range(args.runs):
            for case in cases:  # each figure right after its baseline: the pair sees the same machine
                baselines[case.baseline].append(_timed(BASELINES[case.baseline], env, baselines_cpu[case.baseline]))
                for tree in trees:
                    figures.setdefault((case.name, tree), []).append(
                        _timed(*line(case, tree), figures_cpu.setdefault((case.name, tree), [])))
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"start-up, {args.runs} rounds, medians (load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after; {os.cpu_count()} CPUs)")
    for name, times in baselines.items():
        cpu = statistics.median(baselines_cpu[name])
        shown = name if name in ("python -c pass", "dunscaith --help") else f"python -c {name!r}"
        print(f"  {shown:<34} "
              f"{statistics.median(times) * 1000:7.0f} ms   (CPU {cpu * 1000:.0f} ms)")
    for case in cases:
        base = statistics.median(baselines[case.baseline])
        for tree in trees:
            took = statistics.median(figures[(case.name, tree)])
            label = case.name if tree is None else f"  {tree.name}: {case.name}"
            goal = (f"goal <= {case.goal:g}  {'met' if took / base <= case.goal else 'NOT MET'}"
                    if case.goal else "goal < 300 ms on a quiet machine")
            cpu = statistics.median(figures_cpu[(case.name, tree)])
            cpu_ratio = cpu / max(statistics.median(baselines_cpu[case.baseline]), 1e-3)
            print(f"  {label:<34} {took * 1000:7.0f} ms   ratio {took / base:5.2f} over {case.baseline:<15} "
                  f"{goal if tree is None else '':<22}  (CPU {cpu * 1000:.0f} ms, ratio {cpu_ratio:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
