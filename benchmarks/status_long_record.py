"""`dunscaith status JOB` of a job with a long record against the same command for a short one.

Run: .venv/bin/python benchmarks/status_long_record.py [--runs 7] [--events 100000] [--pairs 10000]
        [--before TREE]

One SQLite store is built through the store's own port (``SqliteStore.append``, as a supervisor appends)
in a temporary record root, holding five jobs:
  short:    the ten events of a finished job;
  observed: the same job with --events observations (pending/running) before it ends;
  requests: unsettled jobs with 0, --pairs/10 and --pairs request/answer pairs (hold, refused).
Then the whole `dunscaith status JOB` process is timed for each, interleaved, medians of --runs: wall
time, and CPU time (user + system, from wait4) which a loaded machine disturbs less. The ratios are
the long records over the short one. Goal (issue 15): the 100k-event record <= 2x the 10-event one,
and the request pairs linear: the CPU per pair over the job with none, at --pairs against --pairs/10
(~1 when linear, ~10 when quadratic). Nothing is asserted: the figures are printed.

With ``--before TREE`` (a source tree of an earlier commit: ``git archive COMMIT | tar -x -C TREE``)
the same jobs are also built by that tree's store in a root of its own (its schema may be older) and
its `status` runs beside this one's (``PYTHONPATH=TREE``), interleaved, and now / before is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.ports.job_store import JobStore

BIN = Path(sys.executable).parent
T0 = datetime(2026, 1, 1, tzinfo=UTC)
BATCH = 5000


def _append_all(store: JobStore, job: JobId, story: list[ev.Event]) -> None:
    head = ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)), store.identity())
    store.create(job, T0, *ev.encode(head))
    for first in range(0, len(story), BATCH):
        with store.batch():
            for n, event in enumerate(story[first:first + BATCH], start=first + 1):
                store.append(job, T0 + timedelta(milliseconds=n), *ev.encode(event))


def _started(oid: ObjectId) -> list[ev.Event]:
    return [ev.Submitting(1, Nonce(f"nonce-{oid}")), ev.Created(1, oid), ev.Confirmed(1, oid), ev.Released(1, oid)]


def _ended(oid: ObjectId) -> list[ev.Event]:
    return [ev.Observed(1, oid, "completed", 0, None, ""), ev.OutcomeReached("succeeded", "exit 0"), ev.Settled()]


def _observed(oid: ObjectId, n: int) -> list[ev.Event]:
    states = ["pending", "running"]
    return [*_started(oid), *(ev.Observed(1, oid, states[i % 2], None, None, "") for i in range(n)), *_ended(oid)]


def _requests(oid: ObjectId, pairs: int) -> list[ev.Event]:
    story = [*_started(oid), ev.Observed(1, oid, "running", None, None, "")]
    for i in range(pairs):
        story += [ev.Requested(f"r{i}", "hold"), ev.Answered(f"r{i}", "refused", "not now")]
    return story


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: the notice of the unsettled job's Unattended state is not a failure
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return took, usage.ru_utime + usage.ru_stime


def _jobs(events: int, pairs: int) -> dict[str, list[ev.Event]]:
    return {"short": _observed(ObjectId("1001"), 3),
            f"{events:,} observed": _observed(ObjectId("1002"), events),
            "0 request pairs": _requests(ObjectId("1005"), 0),
            f"{pairs // 10:,} request pairs": _requests(ObjectId("1003"), pairs // 10),
            f"{pairs:,} request pairs": _requests(ObjectId("1004"), pairs)}


def _build(root: Path, jobs: dict[str, list[ev.Event]]) -> dict[str, JobId]:
    names = {}
    with SqliteStore.open(root, SystemHost()) as store:
        for i, (label, story) in enumerate(jobs.items()):
            names[label] = JobId(f"job-{i}")
            _append_all(store, names[label], story)
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--before", type=Path, metavar="TREE", help="an earlier source tree to compare with")
    parser.add_argument("--build-only", type=Path, metavar="ROOT", help=argparse.SUPPRESS)  # --before's build
    args = parser.parse_args()
    jobs = _jobs(args.events, args.pairs)
    if args.build_only:
        _build(args.build_only, jobs)
        return
    with tempfile.TemporaryDirectory() as scratch:
        root, home = Path(scratch) / "root", Path(scratch) / "home"
        home.mkdir(mode=0o700)
        started = time.perf_counter()
        names = _build(root, jobs)
        print(f"built {sum(len(s) + 1 for s in jobs.values()):,} events in {time.perf_counter() - started:.1f} s")
        # bytecode written and used, as an installed dunscaith has it (PYTHONDONTWRITEBYTECODE would make
        # every run compile every module it imports: ~30 ms of each, the same for all)
        here = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env = {**here, "HOME": str(home), "XDG_CONFIG_HOME": f"{home}/.config",
               "XDG_CACHE_HOME": f"{home}/.cache", "DUNSCAITH_RECORDS__ROOT": str(root), "NO_COLOR": "1"}
        envs = {"now": env}
        if args.before:
            old_root = Path(scratch) / "root-before"
            subprocess.run([sys.executable, __file__, "--build-only", str(old_root), "--events", str(args.events),
                            "--pairs", str(args.pairs)], env={**os.environ, "PYTHONPATH": str(args.before)},
                           check=True)
            envs["before"] = {**env, "DUNSCAITH_RECORDS__ROOT": str(old_root), "PYTHONPATH": str(args.before),
                              "XDG_CACHE_HOME": f"{home}/.cache-before"}
        walls: dict[tuple[str, str], list[float]] = {(tree, label): [] for tree in envs for label in jobs}
        cpus: dict[tuple[str, str], list[float]] = {(tree, label): [] for tree in envs for label in jobs}
        for tree_env in envs.values():  # once each first: caches warm, the settings cache built
            for label in jobs:
                _run([str(BIN / "dunscaith"), "status", names[label]], tree_env)
        for _ in range(args.runs):
            for label in jobs:
                for tree, tree_env in envs.items():
                    wall, cpu = _run([str(BIN / "dunscaith"), "status", names[label]], tree_env)
                    walls[tree, label].append(wall)
                    cpus[tree, label].append(cpu)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; medians of {args.runs} interleaved runs")
    small, large = f"{args.pairs // 10:,} request pairs", f"{args.pairs:,} request pairs"
    for tree in envs:
        wall0, cpu0 = statistics.median(walls[tree, "short"]), statistics.median(cpus[tree, "short"])
        print(f"{tree}{f' ({args.before})' if tree == 'before' else ''}:")
        for label in jobs:
            wall, cpu = statistics.median(walls[tree, label]), statistics.median(cpus[tree, label])
            print(f"  status, {label:>22} ({len(jobs[label]) + 1:>7,} events): wall {wall * 1000:6.0f} ms "
                  f"({wall / wall0:4.2f}x)  CPU {cpu * 1000:6.0f} ms ({cpu / cpu0:4.2f}x)")
        none = statistics.median(cpus[tree, "0 request pairs"])
        per_small = (statistics.median(cpus[tree, small]) - none) / (args.pairs // 10)
        per_large = (statistics.median(cpus[tree, large]) - none) / args.pairs
        if per_small > 0:
            growth = per_large / per_small
            verdict = "linear" if growth <= 1.5 else "NOT linear"
            print(f"  requests: CPU per pair over the job with none {per_small * 1e6:.1f} us at {args.pairs // 10:,}, "
                  f"{per_large * 1e6:.1f} us at {args.pairs:,}: {growth:.2f}x per pair for 10x the pairs -> "
                  f"{verdict} (linear: ~1 or less; quadratic: ~10)")
        else:
            print(f"  requests: {small} cost no more CPU than none (linear: too small to measure)")
    if args.before:
        print("now / before (wall, CPU):")
        for label in jobs:
            ratios = [statistics.median(xs["now", label]) / statistics.median(xs["before", label])
                      for xs in (walls, cpus)]
            print(f"  {label:>22}: {ratios[0]:4.2f}  {ratios[1]:4.2f}")
    print("goal: the 100k-event record <= 2x the 10-event one; request pairs linear")


if __name__ == "__main__":
    main()
