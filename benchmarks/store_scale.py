"""Benchmark: ``status`` and ``list`` with 1, 1k, 10k and 100k jobs in the store, and ``--help``.

The stores are built through the store's own port by ``build_store.py`` (nine events a job, the three
newest left unsettled, so the Unattended notice has work to do), once, under ``--stores`` (default
/var/tmp/dunscaith-bench-$USER), and reused on later runs. Each store comes with a home holding every
job's pointer (``--stores``/homes/N, written through the Pointers port: the finished jobs' settled,
the three unsettled ones' not), which is the home every command below runs with. Every figure is a
median of whole-process wall times, interleaved so that all sizes see the same machine load, and
printed as a ratio against its baseline in the same run:

- ``status JOB`` (a finished 9-event job) at each size against 1 job (goal at 100k: <= 1.2);
- ``list --limit 50`` at each size against 1k (goal at 100k: <= 1.5);
- ``list --all --limit 50`` (which reads every pointer, settled ones too) at each size against 1k: what
  every command paid before the index of pointers not settled;
- ``list --json`` of every job: peak RSS (goal at 100k: <= 100 MiB) and wall time;
- ``dunscaith --help`` and ``qdevices --help`` against ``python -c 'import typer'`` (goal <= 1.5).

With ``--before TREE`` (a source tree of an earlier commit, e.g. ``git archive COMMIT | tar -x -C
TREE``) ``status JOB`` and ``list --limit 50`` also run from that tree (``PYTHONPATH``, same stores and
homes), interleaved, and the ratio now / before is printed at each size.

Nothing is asserted.

    .venv/bin/python benchmarks/store_scale.py [--sizes 1,1000,10000,100000] [--runs 7] [--json-runs 3]
        [--stores DIR] [--before TREE]
"""

from __future__ import annotations

import argparse
import getpass
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
JOB = "job-0000000"  # the oldest job of every store: finished, nine events


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return took, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def _ensure(stores: Path, size: int) -> tuple[Path, Path]:
    """The store of ``size`` jobs and the home holding their pointers, built if missing."""
    root, home = stores / str(size), stores / "homes" / str(size)
    opened = str(3 if size >= 1000 else 0)
    if not (root / "records.db").exists():
        print(f"building a store of {size} jobs in {root} ...", flush=True)
        subprocess.run([sys.executable, str(HERE / "build_store.py"), str(root), "--jobs", str(size),
                        "--open", opened, "--pointers", str(home)], check=True)
    elif not (home / ".config" / "dunscaith" / "jobs" / ".unsettled" / ".built").exists():
        print(f"writing the pointers of {size} jobs in {home} ...", flush=True)
        subprocess.run([sys.executable, str(HERE / "build_store.py"), str(root), "--jobs", str(size),
                        "--open", opened, "--pointers", str(home), "--pointers-only"], check=True)
    return root, home


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,1000,10000,100000")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json-runs", type=int, default=3, help="runs of list --json at each size (slow at 100k)")
    parser.add_argument("--stores", type=Path, default=Path(f"/var/tmp/dunscaith-bench-{getpass.getuser()}"))
    parser.add_argument("--before", type=Path, metavar="TREE", help="an earlier source tree to compare with")
    parser.add_argument("--no-json", action="store_true", help="skip list --json and the help figures")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    stores = {size: _ensure(args.stores, size) for size in sizes}
    dunscaith, qdevices = str(BIN / "dunscaith"), str(BIN / "qdevices")
    with tempfile.TemporaryDirectory() as home:
        base = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": f"{home}/.config"}
        envs = {size: {**base, "HOME": str(homed), "XDG_CONFIG_HOME": f"{homed}/.config",
                       "XDG_CACHE_HOME": f"{home}/.cache", "DUNSCAITH_RECORDS__ROOT": str(root)}
                for size, (root, homed) in stores.items()}
        status: dict[int, list[float]] = {s: [] for s in sizes}
        page: dict[int, list[float]] = {s: [] for s in sizes}
        every: dict[int, list[float]] = {s: [] for s in sizes}
        old_status: dict[int, list[float]] = {s: [] for s in sizes}
        old_page: dict[int, list[float]] = {s: [] for s in sizes}
        olds = {size: {**env, "PYTHONPATH": str(args.before)} for size, env in envs.items()} if args.before else {}
        help_argv = {"import typer": [sys.executable, "-c", "import typer"],
                     "dunscaith --help": [dunscaith, "--help"], "qdevices --help": [qdevices, "--help"],
                     "dunscaith status --help": [dunscaith, "status", "--help"]}
        help_runs: dict[str, list[float]] = {name: [] for name in help_argv}
        help_cpu: dict[str, list[float]] = {name: [] for name in help_argv}
        for size in sizes:  # warm each store's pages once
            _run([dunscaith, "list", "--limit", "50"], envs[size])
        for _ in range(args.runs):  # interleaved: every figure sees the same load
            for size in sizes:
                status[size].append(_run([dunscaith, "status", JOB], envs[size])[0])
                page[size].append(_run([dunscaith, "list", "--limit", "50"], envs[size])[0])
                every[size].append(_run([dunscaith, "list", "--all", "--limit", "50"], envs[size])[0])
                if olds:
                    old_status[size].append(_run([dunscaith, "status", JOB], olds[size])[0])
                    old_page[size].append(_run([dunscaith, "list", "--limit", "50"], olds[size])[0])
            if args.no_json:
                continue
            for name, argv in help_argv.items():
                wall, _, cpu = _run(argv, base)
                help_runs[name].append(wall)
                help_cpu[name].append(cpu)
        json_runs = {size: [_run([dunscaith, "list", "--json"], envs[size]) for _ in range(args.json_runs)]
                     for size in sizes} if not args.no_json else {}

    def med(xs: list[float]) -> float:
        return statistics.median(xs)

    print(f"medians of {args.runs} interleaved runs (whole process, wall time); every store with one pointer "
          "per job in its home")
    s0 = med(status[sizes[0]])
    print(f"\nstatus {JOB}   (baseline: {sizes[0]} job{'s' if sizes[0] != 1 else ''} in the store)")
    for size in sizes:
        print(f"  {size:>7} jobs: {med(status[size]) * 1000:7.0f} ms  ratio {med(status[size]) / s0:.2f}")
    print("  goal: at 100k <= 1.2")
    ref = 1000 if 1000 in sizes else sizes[0]
    p0 = med(page[ref])
    print(f"\nlist --limit 50   (baseline: {ref} jobs)")
    for size in sizes:
        print(f"  {size:>7} jobs: {med(page[size]) * 1000:7.0f} ms  ratio {med(page[size]) / p0:.2f}")
    print("  goal: at 100k <= 1.5")
    e0 = med(every[ref])
    print(f"\nlist --all --limit 50: reads every pointer   (baseline: {ref} jobs)")
    for size in sizes:
        print(f"  {size:>7} jobs: {med(every[size]) * 1000:7.0f} ms  ratio {med(every[size]) / e0:.2f}")
    if olds:
        print(f"\nnow against {args.before} (the same stores and homes)")
        for size in sizes:
            ns, os_, np_, op = med(status[size]), med(old_status[size]), med(page[size]), med(old_page[size])
            print(f"  {size:>7} jobs: status {ns * 1000:6.0f} ms / {os_ * 1000:6.0f} ms = {ns / os_:.2f}   "
                  f"list --limit 50 {np_ * 1000:6.0f} ms / {op * 1000:6.0f} ms = {np_ / op:.2f}")
    if args.no_json:
        return
    print("\nlist --json (every job)")
    for size in sizes:
        walls = [w for w, _, _ in json_runs[size]]
        peak = max(r for _, r, _ in json_runs[size]) / 1024
        print(f"  {size:>7} jobs: {med(walls) * 1000:7.0f} ms  peak RSS {peak:6.1f} MiB")
    print("  goal: at 100k <= 100 MiB")
    t0, c0 = med(help_runs["import typer"]), med(help_cpu["import typer"])
    print(f"\nhelp   (baseline: python -c 'import typer', {t0 * 1000:.0f} ms wall, {c0 * 1000:.0f} ms CPU)")
    for name, runs in help_runs.items():
        if name != "import typer":
            cpu = med(help_cpu[name])
            print(f"  {name:<24} {med(runs) * 1000:6.0f} ms  ratio {med(runs) / t0:.2f}   "
                  f"CPU {cpu * 1000:4.0f} ms  ratio {cpu / c0:.2f}")
    print("  goal: dunscaith --help and qdevices --help <= 1.5")


if __name__ == "__main__":
    main()
