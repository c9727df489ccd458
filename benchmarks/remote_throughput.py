"""How much `dunscaith remote run` costs: stdout through the wrapper vs through `cat`, and the fixed
cost of wrapping `true` vs `python -c pass`.

Run: .venv/bin/python benchmarks/remote_throughput.py [--mib 1024] [--pairs 5] [--startups 15]

Throughput, two ways, each a paired run (baseline then wrapper, back to back) repeated --pairs times;
the figure is the median of the pairs' ratios (the machine is shared: absolute times drift, ratios of
neighbours hold):
  pipe:       `dd | cat | cat > /dev/null`      vs  `dunscaith remote run -- dd | cat > /dev/null`
  /dev/null:  `dd | cat > /dev/null`            vs  `dunscaith remote run -- dd > /dev/null`
The wrapper counts and sha256-digests every byte; the SHA-256 of the same bytes in memory, in this
process, is printed as the ceiling no digesting forwarder can pass. The CPU seconds of each whole
pipeline (all its processes) are printed too: on a loaded machine the wall time follows them.
Goal: ratio >= 0.8 of `cat`. One SHA-256 runs on one core: when `cat` moves the bytes faster than
SHA-256 alone can hash them (onto /dev/null, typically), no digesting forwarder can reach the goal;
the ratio cat / sha256 is printed as that case's ceiling. The wrapper forwards by tee(2)/splice(2)
into a pipe or /dev/null (adapters/process/stdout_pump.py).

Start-up: `dunscaith remote run -- true` vs `python -c pass` (this interpreter), paired, medians.
Goal: at most 0.15 s more. Nothing is asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(cmd: str, cpu: list[float] | None = None) -> float:
    start, start_cpu = time.perf_counter(), _children_cpu()
    subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], check=True)
    if cpu is not None:
        cpu.append(_children_cpu() - start_cpu)
    return time.perf_counter() - start


def _timed_argv(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - start


def _sha256_seconds(mib: int) -> float:
    block = memoryview(bytearray(1 << 20))
    digest = hashlib.sha256()
    start = time.perf_counter()
    for _ in range(mib):
        digest.update(block)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--startups", type=int, default=15)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dunscaith-bench-"))
    source = f"dd if=/dev/zero bs=1M count={args.mib} status=none"
    runs = iter(range(1_000_000))
    cases = {
        "pipe": (f"{source} | cat | cat > /dev/null", "{wrap} -- {source} | cat > /dev/null"),
        "/dev/null": (f"{source} | cat > /dev/null", "{wrap} -- {source} > /dev/null"),
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    cpu: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in cases}
    startup: list[tuple[float, float]] = []
    try:
        for _ in range(args.pairs):
            for name, (baseline, wrapped) in cases.items():
                wrap = f"{DUNSCAITH} remote run --instance-dir {scratch}/t{next(runs)}"
                results[name].append((_timed(baseline, cpu[name][0]),
                                      _timed(wrapped.format(wrap=wrap, source=source), cpu[name][1])))
        sha_s = statistics.median(_sha256_seconds(args.mib) for _ in range(3))
        for _ in range(args.startups):
            startup.append((_timed_argv([sys.executable, "-c", "pass"]),
                            _timed_argv([DUNSCAITH, "remote", "run", "--instance-dir", f"{scratch}/s{next(runs)}",
                                         "--", "true"])))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    mib = args.mib
    print(f"stdout throughput, {mib} MiB, median of {args.pairs} paired runs (count and sha256 included):")
    for name, pairs in results.items():
        base = statistics.median(b for b, _ in pairs)
        wrapped = statistics.median(w for _, w in pairs)
        ratio = statistics.median(b / w for b, w in pairs)
        print(f"  {name:10s} cat {mib / base:6.0f} MiB/s ({base:.3f} s)   wrapper {mib / wrapped:6.0f} MiB/s "
              f"({wrapped:.3f} s)   ratio wrapper/cat {ratio:.2f}  (goal >= 0.8)")
        print(f"  {'':10s} CPU of the whole pipeline: cat {statistics.median(cpu[name][0]):.2f} s, "
              f"wrapper {statistics.median(cpu[name][1]):.2f} s")
    print(f"  sha256 alone, in memory, this process: {mib / sha_s:6.0f} MiB/s ({sha_s:.3f} s): the ceiling")
    for name, pairs in results.items():
        base = statistics.median(b for b, _ in pairs)
        print(f"  {name:10s} the best ratio any forwarder that digests can reach here, cat / sha256 alone: "
              f"{min(1.0, base / sha_s):.2f} (before its start-up)")
    base = statistics.median(b for b, _ in startup)
    wrapped = statistics.median(w for _, w in startup)
    extra = statistics.median(w - b for b, w in startup)
    print(f"start-up, median of {args.startups} paired runs:")
    print(f"  python -c pass:                  {base * 1000:7.1f} ms")
    print(f"  dunscaith remote run -- true:    {wrapped * 1000:7.1f} ms")
    print(f"  overhead over python -c pass:    {extra * 1000:7.1f} ms  (goal <= 150 ms)")


if __name__ == "__main__":
    main()
