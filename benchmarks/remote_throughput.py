"""How much `dunscaith remote run` costs: stdout through the wrapper vs through `cat`, and the fixed
cost of wrapping `true` vs `python -c pass`.

Run: .venv/bin/python benchmarks/remote_throughput.py [--mib 1024] [--pairs 5] [--startups 15] [--before DIR]

--before DIR: also run the wrapper from another source tree (say `git archive COMMIT | tar -x -C DIR`),
through PYTHONPATH, in the same pairs: its ratios are printed beside this tree's, measured side by side.

Throughput, three ways, each a paired run (baseline then wrapper, back to back) repeated --pairs times,
the cases interleaved; the figure is the median of the pairs' ratios (the machine is shared: absolute
times drift, ratios of neighbours hold better):
  pipe:       `dd | cat | cat > /dev/null`      vs  `dunscaith remote run -- dd | cat > /dev/null`
  file:       `dd | cat >> FILE`                vs  `dunscaith remote run -- dd >> FILE`
              (O_APPEND, as the local scheduler opens a job's stdout; FILE removed before each run)
  /dev/null:  `dd | cat > /dev/null`            vs  `dunscaith remote run -- dd > /dev/null`
The wrapper counts and digests every byte (BLAKE3; SHA-256 before, printed for comparison). Each ratio
is printed twice: of the whole runs, and net of the wrapper's fixed cost (the median wall time of
`remote run -- true`, its start and its end, taken off the wrapper's time), which is the forwarding's
own throughput.

Ceilings, printed per case. One digest is one sequential stream on one core: no digesting forwarder
finishes sooner than the wrapper's digest (`stdout_digest.new_digest().update`) over the same bytes in
memory (measured here), so with a free core the best ratio is cat / digest-alone. On a busy machine
(no free core) the wall time follows the CPU time instead, and the wrapper's pipeline needs about the
cat pipeline's CPU plus the hash's: the best ratio there is about cat-CPU / (cat-CPU + digest-CPU).
The load average before and after is printed with the figures, and per pair the share of the CPUs
other programs used meanwhile (from /proc/stat, less this pipeline's own CPU); the pairs run while
others used under a quarter of them get a median of their own when there are three or more (the
host's other guests are not seen in /proc/stat: a pair can be disturbed while it reads 0%). Goal: ratio >= 0.8 of `cat`.

Start-up: `dunscaith remote run -- true` vs `python -c pass` (this interpreter), paired, medians.
Goal: at most 0.15 s more. Nothing is asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dunscaith.domain.model.stdout_digest import new_digest

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (Linux /proc/stat; 0 elsewhere)."""
    try:
        with open("/proc/stat") as stat:
            ticks = [int(field) for field in stat.readline().split()[1:]]
    except OSError:
        return 0.0
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait


QUIET = 0.25
OTHERS: list[float] = []  # per timed run: the share of the machine's CPUs that other programs used meanwhile


def _timed(cmd: str, cpu: list[float] | None = None, env: dict[str, str] | None = None) -> float:
    start, start_cpu, start_busy = time.perf_counter(), _children_cpu(), _busy_seconds()
    subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], check=True, env=env)
    used = _children_cpu() - start_cpu
    wall = time.perf_counter() - start
    if cpu is not None:
        cpu.append(used)
    OTHERS.append(max(0.0, _busy_seconds() - start_busy - used) / (wall * (os.cpu_count() or 1)))
    return wall


def _timed_argv(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - start


def _digest_seconds(mib: int, make: Callable[[], Any] = new_digest) -> float:
    block = memoryview(bytearray(1 << 20))
    digest = make()
    start = time.perf_counter()
    for _ in range(mib):
        digest.update(block)
    return time.perf_counter() - start


def _digest_cpu(mib: int) -> float:
    start = time.process_time()
    _digest_seconds(mib)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--startups", type=int, default=15)
    parser.add_argument("--before", type=Path, help="another source tree whose wrapper runs in the same pairs")
    args = parser.parse_args()
    before_env = None if args.before is None else {**os.environ, "PYTHONPATH": str(args.before.resolve())}
    scratch = Path(tempfile.mkdtemp(prefix="dunscaith-bench-"))
    out = scratch / "out"
    source = f"dd if=/dev/zero bs=1M count={args.mib} status=none"
    runs = iter(range(1_000_000))
    cases = {
        "pipe": (f"{source} | cat | cat > /dev/null", "{wrap} -- {source} | cat > /dev/null"),
        "file": (f"{source} | cat >> {out}", "{wrap} -- {source} >> " + str(out)),
        "/dev/null": (f"{source} | cat > /dev/null", "{wrap} -- {source} > /dev/null"),
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    before: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    cpu: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in cases}
    before_cpu: dict[str, list[float]] = {name: [] for name in cases}
    others: dict[str, list[float]] = {name: [] for name in cases}  # per pair, the larger of its two runs'
    startup: list[tuple[float, float]] = []
    load_before = os.getloadavg()
    try:
        for _ in range(args.pairs):
            for name, (baseline, wrapped) in cases.items():
                wrap = f"{DUNSCAITH} remote run --instance-dir {scratch}/t{next(runs)}"
                out.unlink(missing_ok=True)  # outside the timing: freeing a GiB of ext4 blocks takes a while
                base = _timed(baseline, cpu[name][0])
                out.unlink(missing_ok=True)
                results[name].append((base, _timed(wrapped.format(wrap=wrap, source=source), cpu[name][1])))
                others[name].append(max(OTHERS[-2:]))
                out.unlink(missing_ok=True)
                if before_env is not None:
                    wrap = f"{DUNSCAITH} remote run --instance-dir {scratch}/t{next(runs)}"
                    before[name].append((base, _timed(wrapped.format(wrap=wrap, source=source), before_cpu[name],
                                                      before_env)))
                    out.unlink(missing_ok=True)
        sha_s = statistics.median(_digest_seconds(args.mib) for _ in range(3))
        sha_cpu = statistics.median(_digest_cpu(args.mib) for _ in range(3))
        old_sha_s = statistics.median(_digest_seconds(args.mib, hashlib.sha256) for _ in range(3))
        for _ in range(args.startups):
            startup.append((_timed_argv([sys.executable, "-c", "pass"]),
                            _timed_argv([DUNSCAITH, "remote", "run", "--instance-dir", f"{scratch}/s{next(runs)}",
                                         "--", "true"])))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load_after = os.getloadavg()
    fixed = statistics.median(w for _, w in startup)
    mib = args.mib
    print(f"stdout throughput, {mib} MiB, median of {args.pairs} paired runs (count and digest included); "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after, {os.cpu_count()} cores:")
    for name, pairs in results.items():
        base = statistics.median(b for b, _ in pairs)
        through = statistics.median(w for _, w in pairs)
        ratio = statistics.median(b / w for b, w in pairs)
        net = statistics.median(b / max(w - fixed, 1e-9) for b, w in pairs)
        cat_cpu, wrap_cpu = statistics.median(cpu[name][0]), statistics.median(cpu[name][1])
        print(f"  {name:10s} cat {mib / base:6.0f} MiB/s ({base:.3f} s)   wrapper {mib / through:6.0f} MiB/s "
              f"({through:.3f} s)   ratio wrapper/cat {ratio:.2f}, net of the fixed cost {net:.2f}  (goal >= 0.8)")
        print(f"  {'':10s} each pair: {' '.join(f'{b / w:.2f}' for b, w in pairs)}; other programs' share of the "
              f"CPUs meanwhile: {' '.join(f'{o:.0%}' for o in others[name])}")
        quiet = [b / w for (b, w), o in zip(pairs, others[name], strict=True) if o < QUIET]
        if len(quiet) >= 3:  # fewer is one outlier's word (the host's other guests are not seen here)
            print(f"  {'':10s} pairs run while others used under {QUIET:.0%} of the CPUs: {len(quiet)}, median ratio "
                  f"{statistics.median(quiet):.2f}")
        print(f"  {'':10s} CPU of the whole pipeline: cat {cat_cpu:.2f} s, wrapper {wrap_cpu:.2f} s; ceilings: "
              f"with a free core cat / digest alone {min(1.0, base / sha_s):.2f}, on a busy machine "
              f"cat-CPU / (cat-CPU + digest-CPU) {cat_cpu / (cat_cpu + sha_cpu):.2f}")
        if before[name]:
            old = before[name]
            print(f"  {'':10s} --before {args.before}: ratio {statistics.median(b / w for b, w in old):.2f}, net "
                  f"{statistics.median(b / max(w - fixed, 1e-9) for b, w in old):.2f}, CPU of the whole pipeline "
                  f"{statistics.median(before_cpu[name]):.2f} s; each pair: {' '.join(f'{b / w:.2f}' for b, w in old)}")
    print(f"  the digest (blake3) alone, in memory, this process: {mib / sha_s:6.0f} MiB/s ({sha_s:.3f} s, "
          f"{sha_cpu:.3f} s CPU); sha256 (the digest before) {mib / old_sha_s:6.0f} MiB/s")
    print(f"  the wrapper's fixed cost taken off for 'net': {fixed * 1000:.0f} ms (remote run -- true, median)")
    base = statistics.median(b for b, _ in startup)
    extra = statistics.median(w - b for b, w in startup)
    print(f"start-up, median of {args.startups} paired runs:")
    print(f"  python -c pass:                  {base * 1000:7.1f} ms")
    print(f"  dunscaith remote run -- true:    {fixed * 1000:7.1f} ms")
    print(f"  overhead over python -c pass:    {extra * 1000:7.1f} ms  (goal <= 150 ms)")


if __name__ == "__main__":
    main()
