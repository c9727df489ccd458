"""Slurm calls per poll interval (1, 10, 100 supervised jobs on one host) and per sweep of 1,000 names.

Run (as root, with the Slurm packages of .ci/install-packages): .venv/bin/python benchmarks/slurm_calls.py

It starts the project's private single-node Slurm (tests/infra/slurm.py) and counts every Slurm
command with a counting shim in the cluster's ``bin_dir`` (one line per call). Supervisors are
threads, each with its own SharedQueryScheduler (its own lock file descriptor, so the flock between
them is as real as between processes) over one cache directory; each wakes on the shared ticks of
``domain.model.jobs.polling.next_poll`` and queries only its own job's name.

Baselines, measured in the same run: every supervisor querying Slurm itself (one squeue each per
interval), and a sweep that asks once per name (what the seed's build does). The sweep measured is
the ``Sweep`` use case itself over the real adapter: query, the domain's rule, cancel_if_not_started.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.scheduler.shared_query import SharedQueryScheduler
from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.objects import ObjectSpec
from dunscaith.domain.model.jobs.polling import next_poll
from dunscaith.ports.scheduler import Scheduler
from tests.contract.sweeping import sweep_once
from tests.infra.slurm import SlurmUnavailable, shared_cluster
from tests.infra.slurm_bin import calls, make_bin_dir

INTERVAL = timedelta(seconds=2)
ROUNDS = 3


def counted(count: Path) -> Counter[str]:
    return Counter(line.split(" ", 1)[0] for line in calls(count))


def poll_rounds(schedulers: Sequence[Scheduler], names: list[JobId], count: Path) -> tuple[Counter[str], float]:
    """Every scheduler queries its own name on each of ROUNDS shared ticks (after one warm-up tick)."""
    clock = SystemClock()
    marks: list[Counter[str]] = []
    walls: list[float] = []
    ticks = [next_poll(clock.now(), INTERVAL) + INTERVAL * i for i in range(ROUNDS + 1)]
    barrier = threading.Barrier(len(schedulers) + 1)

    def supervisor(s: Scheduler, name: JobId) -> None:
        for tick in ticks:
            time.sleep(max(0.0, (tick - clock.now()).total_seconds()))
            result = s.query([name], confirm_absent=True)
            assert result.complete and len(result.objects) == 1, result
            barrier.wait()

    threads = [threading.Thread(target=supervisor, args=(s, n)) for s, n in zip(schedulers, names, strict=True)]
    for t in threads:
        t.start()
    for tick in ticks:
        barrier.wait()
        marks.append(counted(count))
        walls.append((clock.now() - tick).total_seconds())
    for t in threads:
        t.join()
    total = marks[-1] - marks[0]  # the warm-up tick (first registrations) is left out
    return total, sum(walls[1:]) / ROUNDS


def main() -> None:
    try:
        cluster = shared_cluster()
    except SlurmUnavailable as exc:
        print(f"skipped: {exc}")
        return
    work = Path(tempfile.mkdtemp(prefix="dunscaith-bench-"))
    try:
        run(cluster.env, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(env: dict[str, str], work: Path) -> None:
    base = SlurmClusterConfig(name="bench", env=env, workdir=work)
    direct = SlurmCliScheduler(base)

    print(f"Slurm calls per poll interval ({INTERVAL.total_seconds():.0f} s ticks, {ROUNDS} intervals measured)")
    print(f"{'jobs':>5} | {'shared calls/interval':>24} | {'baseline calls/interval':>23} | {'ratio':>6} | "
          f"{'wall/interval':>13}")
    for n in (1, 10, 100):
        names = [JobId(f"bench-{n}-{i}") for i in range(n)]
        for name in names:
            direct.create_held(ObjectSpec(name, Nonce(f"n-{name}"), command=("true",)))
        count = work / f"calls-{n}"
        config = replace(base, bin_dir=make_bin_dir(work / f"bin-{n}", count_to=count))
        shared = [SharedQueryScheduler(SlurmCliScheduler(config), work / f"cache-{n}", SystemClock(), max_age=1.5)
                  for _ in names]
        ours, wall = poll_rounds(shared, names, count)
        base_count = work / f"base-{n}"
        baseline_config = replace(base, bin_dir=make_bin_dir(work / f"bin-base-{n}", count_to=base_count))
        plain = [SlurmCliScheduler(baseline_config) for _ in names]
        theirs, _ = poll_rounds(plain, names, base_count)
        per, base_per = sum(ours.values()) / ROUNDS, sum(theirs.values()) / ROUNDS
        detail = ", ".join(f"{k} {v / ROUNDS:g}" for k, v in sorted(ours.items()))
        print(f"{n:>5} | {per:>10g} ({detail}) | {base_per:>23g} | {base_per / per:>5.0f}x | {wall:>11.3f} s")
        for s in shared:
            s.close()
        direct.cancel_if_not_started([v.object_id for v in direct.query(names, confirm_absent=False).objects])

    print("\nSweep of 1,000 residual names (5 of them left a held object by a lost reply)")
    names = [JobId(f"residual-{i:04d}") for i in range(1000)]
    for name in names[:5]:
        direct.create_held(ObjectSpec(name, Nonce(f"lost-{name}"), command=("true",)))
    count = work / "calls-sweep"
    sweeper = SlurmCliScheduler(replace(base, bin_dir=make_bin_dir(work / "bin-sweep", count_to=count)))
    started = time.monotonic()
    stopped = sweep_once(sweeper, {name: frozenset({Nonce(f"lost-{name}")}) for name in names}).stopped
    ours_wall = time.monotonic() - started
    ours = counted(count)
    again = work / "calls-sweep-again"
    sweeper = SlurmCliScheduler(replace(base, bin_dir=make_bin_dir(work / "bin-sweep-again", count_to=again)))
    nothing = sweep_once(sweeper, {name: None for name in names[5:]}).stopped
    empty = counted(again)
    base_count = work / "calls-sweep-base"
    per_name = SlurmCliScheduler(replace(base, bin_dir=make_bin_dir(work / "bin-sweep-base", count_to=base_count)))
    started = time.monotonic()
    for name in names:
        per_name.query([name], confirm_absent=False)
    base_wall = time.monotonic() - started
    theirs = counted(base_count)
    print(f"  dunscaith sweep, 5 to stop: {sum(ours.values())} calls ({dict(ours)}), stopped {len(stopped)}, "
          f"{ours_wall:.2f} s")
    print(f"  dunscaith sweep, nothing to stop: {sum(empty.values())} call ({dict(empty)}), stopped {len(nothing)}")
    print(f"  baseline, one query per name: {sum(theirs.values())} calls, {base_wall:.2f} s "
          f"(ratio {sum(theirs.values()) / max(1, sum(ours.values())):.0f}x calls, {base_wall / ours_wall:.0f}x time)")


if __name__ == "__main__":
    main()
