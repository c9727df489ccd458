"""What an idle wrapper costs: CPU seconds per hour and wake-ups per second with a sleeping worker.

Run: .venv/bin/python benchmarks/wrapper_idle.py [--seconds 60]

Three wrappers run side by side over the same interval, each owning `sleep`:
  watched:   `dunscaith remote run` as every local job starts it (inotify on the instance directory);
  fallback:  the same wrapper with no notification (what it does when inotify cannot be had: a look
             every second);
  0.1 s poll: the same wrapper looking every 0.1 s, as it did before the watch (the baseline).
CPU time is the kernel's per-thread run time (/proc/PID/task/*/schedstat, nanoseconds), so even a
few milliseconds per hour show; wake-ups are context switches of all the wrapper's threads.
Goal: watched <= 0.05 s CPU per hour. Nothing is asserted: the figures are printed. Linux only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")

WITH_WATCH = """
import sys
from pathlib import Path
from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.process.directory_watch import Polling
from dunscaith.adapters.process.wrapper import LaunchSpec, PosixWrapper

class EveryTenth(Polling):
    poll_seconds = 0.1

watch = {"fallback": lambda d: Polling(), "poll-0.1": lambda d: EveryTenth()}[sys.argv[1]]
wrapper = PosixWrapper(Path(sys.argv[2]), SystemClock(), watch=watch)
wrapper.claim()
sys.exit(wrapper.run(LaunchSpec(tuple(sys.argv[3:]), {"PATH": "/usr/bin:/bin"}, "/")))
"""


def _sample(pid: int) -> tuple[float, int]:
    """(seconds on CPU, context switches) summed over the threads of ``pid``."""
    cpu_ns, switches = 0, 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):
            cpu_ns += int((task / "schedstat").read_text().split()[0])
            for line in (task / "status").read_text().splitlines():
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    switches += int(line.split()[1])
    return cpu_ns / 1e9, switches


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"no {path} after 30 s")
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dunscaith-idle-"))
    sleep_for = str(int(args.seconds + 60))
    starts = {
        "watched": [DUNSCAITH, "remote", "run", "--instance-dir", str(scratch / "watched"),
                    "--env", "PATH=/usr/bin:/bin", "--", "sleep", sleep_for],
        "fallback": [sys.executable, "-c", WITH_WATCH, "fallback", str(scratch / "fallback"), "sleep", sleep_for],
        "poll-0.1": [sys.executable, "-c", WITH_WATCH, "poll-0.1", str(scratch / "poll-0.1"), "sleep", sleep_for],
    }
    procs = {name: subprocess.Popen(argv, stdout=subprocess.DEVNULL) for name, argv in starts.items()}
    try:
        for name in procs:
            _wait_for(scratch / name / "instance.json")
        time.sleep(1.0)  # past the start-up
        before = {name: _sample(p.pid) for name, p in procs.items()}
        time.sleep(args.seconds)
        after = {name: _sample(p.pid) for name, p in procs.items()}
    finally:
        for name, proc in procs.items():
            with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
                group = json.loads((scratch / name / "instance.json").read_bytes())["process_group"]
                os.killpg(group, signal.SIGKILL)
            proc.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    per_hour = {name: (after[name][0] - before[name][0]) * 3600 / args.seconds for name in procs}
    wakeups = {name: (after[name][1] - before[name][1]) / args.seconds for name in procs}
    print(f"idle wrapper with a sleeping worker, {args.seconds:g} s side by side:")
    for name in procs:
        print(f"  {name:9s} {per_hour[name]:8.4f} s CPU per hour   {wakeups[name]:7.2f} wake-ups/s")
    baseline = per_hour["poll-0.1"]
    print(f"  ratio watched / 0.1 s poll: {per_hour['watched'] / baseline if baseline else float('nan'):.4f}"
          f"   (goal: watched <= 0.05 s per hour)")


if __name__ == "__main__":
    main()
