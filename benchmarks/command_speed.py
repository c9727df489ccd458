"""Each command's own time against ``python -c 'import typer'``, measured in the same run (issue 37).

Issue 37's goals: every read command (status, list, list --expand, logs, events) and the command's own
part of a job command (hold, release, cancel) at most 2.5x ``python -c 'import typer'``; a completion of a
job's name under 0.1 s over ``python -c pass``. Each figure is paired with its baseline in every round
(the machine is shared: the pair sees the same load); medians; the CPU seconds of the same runs beside.

One local job is recorded first, in a throwaway HOME and record root, and has ended: hold, release and
cancel of it are answered from its record (the command's own part: nothing is sent). Bytecode is written
(PYTHONDONTWRITEBYTECODE unset) and each command runs once before the timing, as an installed dunscaith
runs, so the settings are remembered, the dataclasses' generated code is kept (root/dataclass_code.py) and
the page cache is warm.

    .venv/bin/python benchmarks/command_speed.py              # 7 rounds
    .venv/bin/python benchmarks/command_speed.py --runs 3

Issue 40's goal: ``status NAME`` of a 3-step pipeline whose first step is a 1,000-element sweep at most 1.5x
``status JOB`` of one job, paired in the same way. The pipeline is recorded (every step's jobs, as a
pipeline submit records them) and nothing of it has run: its two later steps wait, so the dependency rule
is asked for every job of it. It is in the store for every case, so ``list`` lists it too (one row).
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
from pathlib import Path

PY = sys.executable
DUNSCAITH = str(Path(PY).parent / "dunscaith")
TYPER = [PY, "-c", "import typer"]
PASS = [PY, "-c", "pass"]
JOB = "bench-job"
PIPELINE = "bench-pipe"
# a 3-step pipeline, a 1,000-element sweep first, recorded as a pipeline submit records it (issue 40)
RECORD_PIPELINE = """
from dunscaith.domain.model.jobs.pipelines import parse_pipeline, step_jobs
from dunscaith.entrypoints.dunscaith.root.settings_cache import plain_settings
from dunscaith.entrypoints.dunscaith.root.wiring import Root

TEXT = '''
name = "bench-pipe"
[[step]]
name = "train"
command = "true {}"
array = "0-999"
[[step]]
name = "reduce"
command = "true"
after = ["train"]
[[step]]
name = "plot"
command = "true"
after = ["reduce"]
'''
root = Root(plain_settings())
try:
    pipeline = parse_pipeline(TEXT, "bench.toml")
    for step in pipeline.order():
        specs = step_jobs(pipeline, step, cluster="local", adapter="local", workdir=None, max_attempts=1)
        if step.is_sweep:
            root.use_cases.record_sweep()(step.job, specs)
        else:
            root.use_cases.record_job()(specs[0])
finally:
    root.shutdown_resources()
"""
# name, dunscaith's words, the baseline's name, the goal (a ratio at most; for completion: seconds over)
CASES: list[tuple[str, list[str], str, float]] = [
    ("status JOB", ["status", JOB], "import typer", 2.5),
    ("status", ["status"], "import typer", 2.5),
    ("list", ["list"], "import typer", 2.5),
    ("list --expand", ["list", "--expand"], "import typer", 2.5),
    ("logs JOB", ["logs", JOB], "import typer", 2.5),
    ("events JOB", ["events", JOB], "import typer", 2.5),
    ("hold JOB", ["hold", JOB], "import typer", 2.5),
    ("release JOB", ["release", JOB], "import typer", 2.5),
    ("cancel JOB", ["cancel", JOB], "import typer", 2.5),
    ("completion: status <TAB>", [], "pass", 0.1),
    ("status PIPELINE (3 steps, 1,000-el.)", ["status", PIPELINE], "status JOB", 1.5),
]
COMPLETION = {"_DUNSCAITH_COMPLETE": "complete_bash", "COMP_WORDS": "dunscaith status ", "COMP_CWORD": "2"}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run (its exit status is not the figure: a hold of an ended job is 2)."""
    start, start_cpu = time.perf_counter(), _cpu()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, _cpu() - start_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds (each command paired with its baseline)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dunscaith-command-speed-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_") and not k.startswith("XDG_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    env.update(HOME=str(scratch / "home"), DUNSCAITH_RECORDS__ROOT=str(scratch / "records"), NO_COLOR="1")
    try:
        (scratch / "home").mkdir(mode=0o700)
        subprocess.run(
            [DUNSCAITH, "submit", "--name", JOB, "--", "true"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        subprocess.run([PY, "-c", RECORD_PIPELINE], env=env, check=True, stdout=subprocess.DEVNULL)
        baselines = {"import typer": TYPER, "pass": PASS, "status JOB": [DUNSCAITH, "status", JOB]}

        def line(words: list[str]) -> tuple[list[str], dict[str, str]]:
            return [DUNSCAITH, *words], ({**env, **COMPLETION} if not words else env)

        for _, words, _, _ in CASES:  # warm: bytecode written, the settings remembered
            _timed(*line(words))
        for argv in baselines.values():
            _timed(argv, env)
        load = os.getloadavg()[0]
        walls: dict[str, list[float]] = {}
        cpus: dict[str, list[float]] = {}
        base_walls: dict[str, list[float]] = {name: [] for name in baselines}
        base_cpus: dict[str, list[float]] = {name: [] for name in baselines}
        for _ in range(args.runs):
            for name, words, base, _ in CASES:
                wall, cpu = _timed(baselines[base], env)
                base_walls[base].append(wall)
                base_cpus[base].append(cpu)
                wall, cpu = _timed(*line(words))
                walls.setdefault(name, []).append(wall)
                cpus.setdefault(name, []).append(cpu)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"command speed, {args.runs} rounds, medians (load average {load:.2f} before; {os.cpu_count()} CPUs)")
    for base in baselines:
        wall, cpu = statistics.median(base_walls[base]), statistics.median(base_cpus[base])
        shown = "pass" if base == "pass" else repr(base)
        what = f"dunscaith {base}" if base == "status JOB" else f"python -c {shown}"
        print(f"  {what:<36} {wall * 1000:6.0f} ms  (CPU {cpu * 1000:.0f} ms)")
    for name, _, base, goal in CASES:
        took, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        base_took, base_cpu = statistics.median(base_walls[base]), statistics.median(base_cpus[base])
        if base == "pass":
            over = took - base_took
            verdict = (
                f"{over * 1000:5.0f} ms over python -c pass (goal < {goal * 1000:.0f} ms) "
                f"{'met' if over < goal else 'NOT MET'}"
            )
        else:
            ratio = took / base_took
            verdict = f"ratio {ratio:5.2f} over {base} (goal <= {goal:g}) {'met' if ratio <= goal else 'NOT MET'}"
        print(
            f"  {name:<34} {took * 1000:6.0f} ms  {verdict:<58} (CPU {cpu * 1000:.0f} ms, "
            f"ratio {cpu / max(base_cpu, 1e-3):.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
