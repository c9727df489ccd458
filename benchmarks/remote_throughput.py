"""How much `dunscaith remote run` costs: 1 GiB of stdout through the wrapper vs through `cat`,
and the wrapper's fixed overhead for `true` vs `true` run directly.

Run: .venv/bin/python benchmarks/remote_throughput.py [--mib 1024] [--repeat 3] [--startups 10]

Both pipelines write the same bytes into the same reader (`cat > /dev/null`), so the only difference
is the hop in the middle: `cat` (baseline) or the wrapper (forward + count + sha256 + control files).
Each figure is the best of --repeat runs, measured in this same run; the ratio goal is >= 0.6.
Nothing is asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")


def _timed(cmd: str) -> float:
    start = time.perf_counter()
    subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--startups", type=int, default=10)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dunscaith-bench-"))
    source = f"dd if=/dev/zero bs=1M count={args.mib} status=none"
    try:
        cat_s = min(_timed(f"{source} | cat | cat > /dev/null") for _ in range(args.repeat))
        wrap_s = min(
            _timed(f"{DUNSCAITH} remote run --instance-dir {scratch}/t{i} -- {source} | cat > /dev/null")
            for i in range(args.repeat)
        )
        true_s = min(_timed("true") for _ in range(args.startups))
        wrapped_true_s = min(
            _timed(f"{DUNSCAITH} remote run --instance-dir {scratch}/s{i} -- true") for i in range(args.startups)
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    mib = args.mib
    print(f"stdout throughput, {mib} MiB, best of {args.repeat}:")
    print(f"  through cat:                 {mib / cat_s:8.0f} MiB/s  ({cat_s:.3f} s)")
    print(f"  through dunscaith remote run:{mib / wrap_s:8.0f} MiB/s  ({wrap_s:.3f} s)")
    print(f"  ratio wrapper/cat:           {cat_s / wrap_s:8.2f}   (goal >= 0.6)")
    steady_s = max(wrap_s - wrapped_true_s, 1e-9)
    print(f"  wrapper without its start-up:{mib / steady_s:8.0f} MiB/s  (1 GiB time minus `true` under the wrapper)")
    print(f"  ratio without start-up:      {cat_s / steady_s:8.2f}")
    print(f"fixed overhead, best of {args.startups}:")
    print(f"  true directly (via bash -c): {true_s * 1000:8.1f} ms")
    print(f"  true under the wrapper:      {wrapped_true_s * 1000:8.1f} ms")
    print(f"  wrapper overhead:            {(wrapped_true_s - true_s) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
