"""`dunscaith status JOB` of a job with a long record against the same command for a short one.

Run: .venv/bin/python benchmarks/status_long_record.py [--runs 7] [--events 100000] [--pairs 10000]

One SQLite store is built through the store's own port (``SqliteStore.append``, as a supervisor appends)
in a temporary record root, holding three jobs:
  short:    the ten events of a finished job;
  observed: the same job with --events observations (pending/running) before it ends;
  requests: an unsettled job with --pairs request/answer pairs (hold, refused).
Then the whole `dunscaith status JOB` process is timed for each, interleaved, medians of --runs: wall
time, and CPU time (user + system, from wait4) which a loaded machine disturbs less. The ratios are
the long records over the short one. Goal (issue 15): the 100k-event record <= 2x the 10-event one,
and the request pairs linear (the same command with a tenth of the pairs, beside it). Nothing is
asserted: the figures are printed.
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

from adapters.host.system import SystemHost
from adapters.store.sqlite.store import SqliteStore
from domain.model.jobs import events as ev
from domain.model.jobs.ids import JobId, Nonce, ObjectId
from domain.model.jobs.spec import JobSpec
from ports.job_store import JobStore

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=10_000)
    args = parser.parse_args()
    jobs = {"short": _observed(ObjectId("1001"), 3),
            f"{args.events:,} observed": _observed(ObjectId("1002"), args.events),
            f"{args.pairs // 10:,} request pairs": _requests(ObjectId("1003"), args.pairs // 10),
            f"{args.pairs:,} request pairs": _requests(ObjectId("1004"), args.pairs)}
    with tempfile.TemporaryDirectory() as scratch:
        root, home = Path(scratch) / "root", Path(scratch) / "home"
        home.mkdir(mode=0o700)
        started = time.perf_counter()
        names = {}
        with SqliteStore.open(root, SystemHost()) as store:
            for i, (label, story) in enumerate(jobs.items()):
                names[label] = JobId(f"job-{i}")
                _append_all(store, names[label], story)
        print(f"built {sum(len(s) + 1 for s in jobs.values()):,} events in {time.perf_counter() - started:.1f} s")
        env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": f"{home}/.config",
               "XDG_CACHE_HOME": f"{home}/.cache", "DUNSCAITH_RECORDS__ROOT": str(root), "NO_COLOR": "1"}
        walls: dict[str, list[float]] = {label: [] for label in jobs}
        cpus: dict[str, list[float]] = {label: [] for label in jobs}
        for label in jobs:  # once each first: caches warm, the first build of the settings cache not counted
            _run([str(BIN / "dunscaith"), "status", names[label]], env)
        for _ in range(args.runs):
            for label in jobs:
                wall, cpu = _run([str(BIN / "dunscaith"), "status", names[label]], env)
                walls[label].append(wall)
                cpus[label].append(cpu)
    wall0, cpu0 = statistics.median(walls["short"]), statistics.median(cpus["short"])
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {args.runs} interleaved runs")
    for label in jobs:
        wall, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
        print(f"status, {label:>22} ({len(jobs[label]) + 1:>7,} events): wall {wall * 1000:6.0f} ms "
              f"({wall / wall0:4.2f}x)  CPU {cpu * 1000:6.0f} ms ({cpu / cpu0:4.2f}x)")
    small, large = f"{args.pairs // 10:,} request pairs", f"{args.pairs:,} request pairs"
    extra_small = statistics.median(cpus[small]) - cpu0
    extra_large = statistics.median(cpus[large]) - cpu0
    if extra_small > 0:
        print(f"requests: CPU over the short record grows {extra_large / extra_small:.1f}x for 10x the pairs "
              "(linear: ~10)")
    print("goal: the 100k-event record <= 2x the 10-event one; request pairs linear")


if __name__ == "__main__":
    main()
