"""Benchmark: ``dunscaith status JOB`` wall time against importing its libraries alone.

The baseline, measured in the same run, is ``python -c 'import sqlalchemy, typer, pydantic_settings,
dependency_injector.containers'``: the least any command built on them can cost. Prints the median of
each over several runs and their ratio (goal: at most 1.3), and whether paramiko was imported by
``status`` (it must not be). Nothing is asserted.

    .venv/bin/python benchmarks/status_walltime.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 15
BASELINE = "import sqlalchemy, typer, pydantic_settings, dependency_injector.containers"
BIN = Path(sys.executable).parent / "dunscaith"


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HOME": tmp, "XDG_CONFIG_HOME": f"{tmp}/.config",
               "DUNSCAITH_RECORDS__ROOT": f"{tmp}/records", "DUNSCAITH_SUPERVISE__POLL": "0.2"}
        subprocess.run([str(BIN), "submit", "--name", "bench", "--", "true"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        probe = ("import sys, runpy; sys.argv = ['dunscaith', 'status', 'bench']\n"
                 "from dunscaith.entrypoints.dunscaith.app import app\n"
                 "from dunscaith.entrypoints.cli_support import run\n"
                 "try:\n    app(args=['status', 'bench'], prog_name='dunscaith', standalone_mode=False)\n"
                 "finally:\n    print('paramiko' in sys.modules, 'rich' in sys.modules, file=sys.stderr)\n")
        flags = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
        paramiko, rich = flags.stderr.split()[-2:]
        status, baseline = [], []
        for _ in range(RUNS):  # interleaved, so both see the same machine load
            baseline.append(_time([sys.executable, "-c", BASELINE], env))
            status.append(_time([str(BIN), "status", "bench"], env))
    s, b = statistics.median(status), statistics.median(baseline)
    print(f"dunscaith status JOB: median {s * 1000:.0f} ms over {RUNS} runs")
    print(f"baseline imports:     median {b * 1000:.0f} ms over {RUNS} runs")
    print(f"ratio: {s / b:.2f} (goal <= 1.3)")
    print(f"paramiko imported by status: {paramiko}; rich imported by status: {rich}")


if __name__ == "__main__":
    main()
