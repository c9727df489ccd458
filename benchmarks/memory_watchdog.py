"""The local scheduler's memory watchdog (adapters/scheduler/local/exec_shim.py): its CPU per job-hour.

Each job is started through the exec shim itself, as the process owner starts it, with a 1G memory limit
(the watchdog walks the job's tree and sums its resident memory every second), and the watchdog's CPU is
read from ``/proc/<pid>/schedstat`` (to the ns) over ``--seconds``. Baseline: the same job with a time
limit alone (the watchdog only wakes to see whether the job lives). Jobs: one process; a shell with 20
children; one process of 101 threads.

    .venv/bin/python benchmarks/memory_watchdog.py [--seconds 60]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHIM = Path(__file__).resolve().parents[1] / "adapters" / "scheduler" / "local" / "exec_shim.py"
JOBS = {
    "one process": ["sleep", "3600"],
    "a tree of 21": ["sh", "-c", "for i in $(seq 20); do sleep 3600 & done; wait"],
    "101 threads": [sys.executable, "-c", "import threading, time; [threading.Thread(target=time.sleep, "
                    "args=(3600,), daemon=True).start() for _ in range(100)]; time.sleep(3600)"],
}


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        found += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
    return found


def _cpu_ns(pid: int) -> int:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def watchdog_cpu(command: list[str], limits: dict[str, int], seconds: float) -> float:
    """The watchdog's CPU seconds per hour of the job."""
    with tempfile.TemporaryDirectory(prefix="watchdog-") as folder:
        env_file = Path(folder) / "env.json"
        env_file.write_text(json.dumps({"env": {"PATH": os.environ["PATH"]}, "limits": limits}))
        job = subprocess.Popen([sys.executable, "-I", "-S", str(SHIM), str(env_file), "--", *command],
                               start_new_session=True)
        try:
            deadline = time.monotonic() + 10
            watchdog = None
            while watchdog is None and time.monotonic() < deadline:
                time.sleep(0.2)
                shims = [c for c in _children(job.pid) if b"exec_shim" in Path(f"/proc/{c}/cmdline").read_bytes()]
                watchdog = shims[0] if shims else None
            if watchdog is None:
                raise SystemExit(f"no watchdog under {command}")
            time.sleep(1.5)  # the job's own start is not the watchdog's cost
            before = _cpu_ns(watchdog)
            time.sleep(seconds)
            used = _cpu_ns(watchdog) - before
        finally:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    return used / 1e9 * 3600 / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    print(f"{'job':<14} {'memory 1G: s CPU/job-hour':>26} {'time limit alone':>17} {'% of a core':>12}")
    for name, command in JOBS.items():
        memory = watchdog_cpu(command, {"memory_mb": 1024}, args.seconds)
        baseline = watchdog_cpu(command, {"time_limit_s": 7200}, args.seconds)
        print(f"{name:<14} {memory:>26.2f} {baseline:>17.2f} {memory / 36:>11.3f}%")


if __name__ == "__main__":
    main()
