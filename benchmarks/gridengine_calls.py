"""Grid Engine calls per poll interval (1, 10, 100 supervised jobs on one host), a 200-element sweep from submit to
every element released beside raw ``qsub -h -t 1-200`` + ``qrls`` in the same run, and a supervisor's CPU per
query (its first hour is 47 queries, ``domain/model/jobs/polling.py``).

Run (as root, with the Grid Engine packages of .ci/install-packages): .venv/bin/python benchmarks/gridengine_calls.py

It starts the project's private single-node SGE 8.1.9 (tests/infra/gridengine.py) and counts every Grid Engine
command with a counting shim in the cluster's ``bin_dir`` (one line per call). Supervisors are threads, each with
its own SharedQueryScheduler over one cache directory, as in benchmarks/slurm_calls.py; the baseline is every
supervisor querying Grid Engine itself.
"""

from __future__ import annotations

import os
import resource
import shlex
import shutil
import subprocess
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
from dunscaith.adapters.scheduler.gridengine import GridEngineConfig, GridEngineScheduler
from dunscaith.adapters.scheduler.shared_query import SharedQueryScheduler
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.objects import ObjectSpec, ObjectState
from dunscaith.domain.model.jobs.polling import next_poll
from dunscaith.ports.scheduler import Scheduler
from tests.infra.gridengine import GridEngineTestCluster, GridEngineUnavailable, shared_cluster

INTERVAL = timedelta(seconds=2)
ROUNDS = 3
COMMANDS = ("qsub", "qstat", "qrls", "qhold", "qdel", "qmod", "qacct", "qconf")
FIRST_HOUR_QUERIES = 47


def make_bin_dir(path: Path, count_to: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name in COMMANDS:
        script = path / name
        script.write_text(
            f'#!/bin/sh\nprintf "%s\\n" "{name} $*" >> {shlex.quote(str(count_to))}\nexec /usr/bin/{name} "$@"\n'
        )
        os.chmod(script, 0o755)
    return path


def counted(count: Path) -> Counter[str]:
    try:
        return Counter(line.split(" ", 1)[0] for line in count.read_text().splitlines() if line)
    except FileNotFoundError:
        return Counter()


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
    return marks[-1] - marks[0], sum(walls[1:]) / ROUNDS


def main() -> None:
    try:
        cluster = shared_cluster()
    except GridEngineUnavailable as exc:
        print(f"skipped: {exc}")
        return
    work = Path(tempfile.mkdtemp(prefix="dunscaith-bench-sge-"))
    try:
        run(cluster, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(cluster: GridEngineTestCluster, work: Path) -> None:
    base = GridEngineConfig(name="bench", env=cluster.env, workdir=work, ledger_dir=work / "ledger")
    direct = GridEngineScheduler(base)
    polls(base, direct, work)
    sweep(cluster, base, work)
    cpu(base, direct)


def polls(base: GridEngineConfig, direct: GridEngineScheduler, work: Path) -> None:
    print(f"Grid Engine calls per poll interval ({INTERVAL.total_seconds():.0f} s ticks, {ROUNDS} intervals measured)")
    print(
        f"{'jobs':>5} | {'shared calls/interval':>26} | {'baseline calls/interval':>23} | {'ratio':>6} | "
        f"{'wall/interval':>13}"
    )
    for n in (1, 10, 100):
        names = [JobId(f"bench-{n}-{i}") for i in range(n)]
        for name in names:
            direct.create_held(ObjectSpec(name, Nonce(f"n-{name}"), command=("true",)))
        count = work / f"calls-{n}"
        config = replace(base, bin_dir=make_bin_dir(work / f"bin-{n}", count))
        shared = [
            SharedQueryScheduler(GridEngineScheduler(config), work / f"cache-{n}", SystemClock(), max_age=1.5)
            for _ in names
        ]
        ours, wall = poll_rounds(shared, names, count)
        base_count = work / f"base-{n}"
        plain = [
            GridEngineScheduler(replace(base, bin_dir=make_bin_dir(work / f"bin-base-{n}", base_count))) for _ in names
        ]
        theirs, _ = poll_rounds(plain, names, base_count)
        per, base_per = sum(ours.values()) / ROUNDS, sum(theirs.values()) / ROUNDS
        detail = ", ".join(f"{k} {v / ROUNDS:g}" for k, v in sorted(ours.items()))
        print(f"{n:>5} | {per:>10g} ({detail:>13}) | {base_per:>23g} | {base_per / per:>5.0f}x | {wall:>11.3f} s")
        for s in shared:
            s.close()
        direct.cancel_if_not_started([v.object_id for v in direct.query(names, confirm_absent=False).objects])


def sweep(cluster: GridEngineTestCluster, base: GridEngineConfig, work: Path) -> None:
    print("\n200-element sweep: submit -> every element released (the adapter's calls, then a query seeing it)")
    count = work / "calls-sweep"
    scheduler = GridEngineScheduler(replace(base, bin_dir=make_bin_dir(work / "bin-sweep", count)))
    sweep_name = JobId("bench-sweep")
    nonce = Nonce("n-bench-sweep")
    elements = [(i, ObjectSpec(JobId(f"{sweep_name}-{i}"), nonce, command=("true",))) for i in range(1, 201)]
    names = [spec.name for _, spec in elements]
    started = time.monotonic()
    answer = scheduler.create_array_held(sweep_name, elements, None)
    assert answer.object_id is not None, answer
    made = time.monotonic()
    scheduler.release(answer.object_id)
    released = time.monotonic()
    while True:  # every element seen released (pending, running or ended: none held)
        result = scheduler.query(names, confirm_absent=False)
        if result.complete and not any(v.state is ObjectState.HELD for v in result.objects):
            break
    seen = time.monotonic()
    calls = counted(count)
    print(
        f"  dunscaith: qsub {made - started:.3f} s, qrls {released - made:.3f} s, seen released "
        f"{seen - started:.3f} s; calls {dict(calls)}"
    )
    raw_started = time.monotonic()
    raw = subprocess.run(
        ["qsub", "-h", "-terse", "-t", "1-200", "-N", "bench-raw", "-cwd", "-b", "y", "true"],
        env=cluster.client_env(),
        capture_output=True,
        text=True,
        check=True,
        cwd=work,
    )
    raw_made = time.monotonic()
    subprocess.run(["qrls", raw.stdout.split(".")[0]], env=cluster.client_env(), capture_output=True, check=True)
    raw_released = time.monotonic()
    print(
        f"  raw qsub -h -t 1-200 + qrls: qsub {raw_made - raw_started:.3f} s, qrls {raw_released - raw_made:.3f} s, "
        f"total {raw_released - raw_started:.3f} s"
    )
    print(
        f"  ratio (dunscaith to seen released / raw qsub + qrls): "
        f"{(seen - started) / (raw_released - raw_started):.1f}x"
    )
    for job in ("bench-sweep", "bench-raw"):
        subprocess.run(["qdel", job], env=cluster.client_env(), capture_output=True, check=False)


def cpu(base: GridEngineConfig, direct: GridEngineScheduler) -> None:
    print(
        "\nA supervisor's CPU per query of one running job (qstat's own CPU apart), and its first hour "
        f"({FIRST_HOUR_QUERIES} queries)"
    )
    name = JobId("bench-cpu")
    answer = direct.create_held(ObjectSpec(name, Nonce("n-bench-cpu"), command=("sleep", "600")))
    assert answer.object_id is not None
    direct.release(answer.object_id)
    scheduler = GridEngineScheduler(base)
    while scheduler.query([name], confirm_absent=True).objects[0].state is not ObjectState.RUNNING:
        time.sleep(0.2)
    n = 40
    before = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(n):
        scheduler.query([name], confirm_absent=True)
    after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    own = sum(getattr(after[0], f) - getattr(before[0], f) for f in ("ru_utime", "ru_stime")) / n
    child = sum(getattr(after[1], f) - getattr(before[1], f) for f in ("ru_utime", "ru_stime")) / n
    print(
        f"  per query: dunscaith {own * 1000:.1f} ms, qstat {child * 1000:.1f} ms; first hour: dunscaith "
        f"{own * FIRST_HOUR_QUERIES:.2f} s, qstat {child * FIRST_HOUR_QUERIES:.2f} s"
    )
    direct.cancel(answer.object_id)


if __name__ == "__main__":
    main()
