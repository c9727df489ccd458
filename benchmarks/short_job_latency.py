"""How long a short job takes from ``dunscaith submit`` to exit, against the same job started plainly.

Run: .venv/bin/python benchmarks/short_job_latency.py [--runs 10] [--no-slurm] [--no-long]

1. Local scheduler: ``dunscaith submit -- true`` (default settings: supervise.poll 10 s) from start to
   exit, against ``sh -c true`` started the same way (a subprocess of this script) in the same run;
   the median difference of ``--runs`` (goal: at most 1.5 s). The supervisor's poll count per job is
   measured by running the same use case in-process over the real local scheduler, counting queries.
2. The test Slurm (tests/infra/slurm.py; skipped without its packages or root): ``dunscaith submit
   --cluster bench -- true`` against ``sbatch --wait --wrap true`` (goal: ratio at most 1.2).
3. A 60 s job's end-to-outcome delay: the job writes the time it ends as its last act; the delay is
   the record's ``outcome`` event time minus that (goal: at most 1 s local, one poll interval on Slurm).

Every figure comes from this run; nothing is compared with numbers from elsewhere.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.adapters.signals.posix import SignalInterrupts
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import QueryResult
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.domain.services.jobs.supervise import SuperviseSettings, Supervisor

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")
LONG = 60.0


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_")}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "DUNSCAITH_RECORDS__ROOT": str(home / "records")}, **extra)
    return env


def timed(argv: Sequence[str], env: dict[str, str], cwd: Path) -> float:
    started = time.monotonic()
    done = subprocess.run(list(argv), env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return took


class _Counting:
    """The real local scheduler, its queries and wake-ups counted."""

    def __init__(self, inner: LocalScheduler) -> None:
        self.inner = inner
        self.queries = 0
        self.woken = 0

    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        self.queries += 1
        return self.inner.query(names, confirm_absent=confirm_absent)

    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        changed = self.inner.wait_for_change(object_ids, timeout)
        self.woken += changed
        return changed

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


class _Quiet:
    def committed(self, state: object, event: object) -> None: ...

    def supervised(self, state: object, at: object) -> None: ...

    def note(self, text: str) -> None: ...


def polls_per_job(root: Path, runs: int) -> tuple[float, float]:
    """Queries and wake-ups per ``true`` job of the in-process supervisor (defaults: poll 10 s)."""
    store = SqliteStore.open(root, SystemHost())
    scheduler = _Counting(LocalScheduler(root))
    clock = SystemClock()
    supervisor = Supervisor(store, scheduler, clock, _NoCrash(), _Quiet(), SuperviseSettings(),  # type: ignore[arg-type]
                            Policy(absence_deadline=timedelta(seconds=600)))
    try:
        for i in range(runs):
            job = RecordJob(store, clock, _NoCrash())(JobSpec(JobId(f"polls-{i}"), "local", "local", ("true",),
                                                               workdir=str(root)))
            with store.lock(job) as lock:
                supervise_one(supervisor, job, lock, SignalInterrupts())
    finally:
        store.close()
    return scheduler.queries / runs, scheduler.woken / runs


class _NoCrash:
    def reached(self, point: str) -> None: ...


def local(work: Path, runs: int) -> None:
    home = work / "local-home"
    home.mkdir()
    env = env_for(home)
    ours, plain = [], []
    for i in range(runs + 1):  # the first pair warms the caches (imports, the store's migration) and is dropped
        a = timed([DUNSCAITH, "submit", "--name", f"true-{i}", "--", "true"], env, work)
        b = timed(["sh", "-c", "true"], env, work)
        if i:
            ours.append(a)
            plain.append(b)
    diffs = [a - b for a, b in zip(ours, plain, strict=True)]
    queries, woken = polls_per_job(work / "polls", runs)
    print(f"local: dunscaith submit -- true: median {statistics.median(ours):.3f} s "
          f"(min {min(ours):.3f}, max {max(ours):.3f}); sh -c true: median {statistics.median(plain):.3f} s")
    print(f"local: difference, median of {runs}: {statistics.median(diffs):.3f} s (goal <= 1.5 s); "
          f"supervisor queries per job: {queries:g}, woken by the job's end: {woken:g}")


def slurm_config(home: Path, env: dict[str, str]) -> None:
    config = home / ".config" / "dunscaith"
    config.mkdir(parents=True)
    pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
    (config / "config.toml").write_text(f'[clusters.bench]\nadapter = "slurm"\nenv = {{ {pairs} }}\n')


def on_slurm(work: Path, runs: int, cluster_env: dict[str, str]) -> None:
    home = work / "slurm-home"
    home.mkdir()
    slurm_config(home, cluster_env)
    env = env_for(home, **cluster_env)
    ours, theirs = [], []
    for i in range(runs + 1):
        a = timed([DUNSCAITH, "submit", "--cluster", "bench", "--name", f"s-true-{i}", "--", "true"], env, work)
        b = timed(["sbatch", "--wait", "--quiet", "--wrap", "true"], env, work)
        if i:
            ours.append(a)
            theirs.append(b)
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(f"slurm: dunscaith submit --cluster bench -- true: median {mo:.3f} s; sbatch --wait --wrap true: "
          f"median {mt:.3f} s; ratio {mo / mt:.2f} (goal <= 1.2), {runs} runs each")


def end_to_outcome(home: Path, env: dict[str, str], cluster: str, work: Path, name: str) -> float:
    stamp = work / f"{name}.end"
    script = f"sleep {LONG:g}; date +%s.%N > {stamp}"
    done = subprocess.run([DUNSCAITH, "submit", "--cluster", cluster, "--name", name, "--", "sh", "-c", script],
                          env=env, cwd=work, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name}: exit {done.returncode}: {done.stderr[-400:]}")
    ended = datetime.fromtimestamp(float(stamp.read_text()), UTC)
    store = SqliteStore.open(home / "records", SystemHost())
    try:
        record = store.read(JobId(name))
    finally:
        store.close()
    fold(record)
    outcome = next(line.at for line in record.events if line.kind == "outcome")
    return (outcome - ended).total_seconds()


def long_jobs(work: Path, cluster_env: dict[str, str] | None) -> None:
    results: dict[str, float] = {}
    local_home = work / "long-local"
    local_home.mkdir()
    jobs = [("local", local_home, env_for(local_home))]
    if cluster_env is not None:
        slurm_home = work / "long-slurm"
        slurm_home.mkdir()
        slurm_config(slurm_home, cluster_env)
        jobs.append(("bench", slurm_home, env_for(slurm_home, **cluster_env)))

    def one(cluster: str, home: Path, env: dict[str, str]) -> None:
        results[cluster] = end_to_outcome(home, env, cluster, work, f"long-{cluster}")

    threads = [threading.Thread(target=one, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"a {LONG:g} s job, end to outcome: local {results['local']:.3f} s (goal <= 1 s)"
          + (f"; slurm {results['bench']:.3f} s (goal <= one poll interval, 10 s)" if "bench" in results else ""))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-slurm", action="store_true")
    parser.add_argument("--no-long", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dunscaith-latency-"))
    try:
        local(work, args.runs)
        cluster_env = None
        if not args.no_slurm:
            from tests.infra.slurm import SlurmUnavailable, shared_cluster

            try:
                cluster_env = shared_cluster().env
                on_slurm(work, args.runs, cluster_env)
            except SlurmUnavailable as exc:
                print(f"slurm: skipped: {exc}")
        if not args.no_long:
            long_jobs(work, cluster_env)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
