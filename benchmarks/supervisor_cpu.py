"""Benchmark: the supervisor's CPU seconds per 1,000 poll loops.

Runs the real Supervisor on a SQLite store in a temporary record root with a zero poll interval, on a
job that stays running, and counts this process's CPU time (user + system) over the loops: once with
the in-memory fake scheduler (the supervisor's own cost) and once with the local scheduler (its real
query included). Every loop queries here; the real loop backs off with the job's age, so it asks
less. At the default interval of 10 s a supervised hour is 360 loops; the goal is at most 1 s of CPU
per supervised hour. Nothing is asserted.

    .venv/bin/python benchmarks/supervisor_cpu.py
    .venv/bin/python benchmarks/supervisor_cpu.py --slurm 300   # also the real Slurm, 300 s measured

With ``--slurm SECONDS`` it also starts the project's private Slurm (tests/infra/slurm.py, as root) and
runs the real ``dunscaith submit --cluster test -- sleep ...`` as a process with the default settings.
Once the job runs, it reads the supervisor's whole process tree from /proc (its own user + system time
and that of every child it reaped: each squeue and the counting shim's ``sh`` in front of it) at the
start and the end of the window, and counts the Slurm calls in the window. Two figures per hour: the
window's rate (an upper bound: a young job is polled most often) and the window's CPU per poll times
the polls of a supervised hour under the default backoff (``domain.model.jobs.polling``).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from adapters.clock.system import SystemClock
from adapters.host.system import SystemHost
from adapters.scheduler.fake import FakeScheduler
from adapters.scheduler.local.scheduler import LocalScheduler
from adapters.store.sqlite.store import SqliteStore
from domain.model.jobs.ids import JobId
from domain.model.jobs.objects import ObjectState
from domain.model.jobs.policy import Policy
from domain.model.jobs.spec import JobSpec
from domain.model.jobs.state import fold
from domain.services.jobs.submit import RecordJob
from domain.services.jobs.supervise import SuperviseSettings, Supervisor

LOOPS = 1000
DEFAULT_POLL = 10.0


class _NoCrash:
    def reached(self, point: str) -> None:
        pass


class _Quiet:
    def committed(self, state: object, event: object) -> None:
        pass

    def supervised(self, state: object, at: object) -> None:
        pass


class _Loops:
    """Stops the supervisor after ``n`` loops; no sleeping (poll 0)."""

    def __init__(self, n: int) -> None:
        self.left = n

    def pending(self) -> str | None:
        return "SIGTERM" if self.left <= 0 else None

    def wait(self, seconds: float) -> str | None:
        self.left -= 1
        return self.pending()


def _measure(label: str, make_scheduler: Callable[[Path], Any], command: tuple[str, ...]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "records"
        store = SqliteStore.open(root, SystemHost())
        scheduler = make_scheduler(root)
        clock = SystemClock()
        job = RecordJob(store, clock, _NoCrash())(JobSpec(JobId("cpu"), "local", "local", command))
        supervisor = Supervisor(store, scheduler, clock, _NoCrash(), _Quiet(),
                                SuperviseSettings(poll=0.0, giveup=3600.0, wait=0.0),
                                Policy(absence_deadline=timedelta(hours=1)))
        with store.lock(job) as lock:
            for _ in range(200):  # warm up until the job runs: created, released, started
                supervisor.run(job, lock, _Loops(1))
                current = fold(store.read(job)).current
                if current is not None and current.object_state is ObjectState.RUNNING:
                    break
                time.sleep(0.05)
            start_cpu, start_wall = time.process_time(), time.perf_counter()
            supervisor.run(job, lock, _Loops(LOOPS))
            cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start_wall
            state = fold(store.read(job))
        for attempt in state.attempts:  # leave nothing running behind
            if attempt.object_id:
                scheduler.cancel(attempt.object_id)
        store.close()
    per_hour = cpu / LOOPS * (3600 / DEFAULT_POLL)
    print(f"{label}: {cpu:.3f} s CPU per {LOOPS} poll loops, each with its query ({wall:.3f} s wall); "
          f"job {state.current.object_state if state.current else None}")
    print(f"  at poll = {DEFAULT_POLL:g} s (a query every loop, no backoff): {per_hour:.3f} s CPU per supervised "
          f"hour (goal <= 1 s)")


def _tree_cpu(pid: int) -> tuple[float, float]:
    """(utime + stime, cutime + cstime) of ``pid``: itself, and every child it reaped, in seconds."""
    fields = [int(v) for v in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:15]]
    tick = os.sysconf("SC_CLK_TCK")
    return (fields[0] + fields[1]) / tick, (fields[2] + fields[3]) / tick


def _polls_in_first_hour(poll: float = DEFAULT_POLL, cap: float = 160.0) -> int:
    """Polls of a job that runs quietly for an hour: the short ones after its start, then the backoff."""
    from domain.model.jobs.polling import PollBackoff, poll_delay

    backoff = PollBackoff(base=timedelta(seconds=poll), cap=timedelta(seconds=cap))
    at, quiet, polls = 0.0, 0, 0
    while at < 3600:
        at += poll_delay(quiet, timedelta(seconds=at), backoff).total_seconds()
        quiet += 1
        polls += 1
    return polls


def _slurm(window: float) -> None:
    import json
    import subprocess
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.infra.slurm import SlurmUnavailable, shared_cluster
    from tests.infra.slurm_bin import calls, make_bin_dir

    try:
        cluster = shared_cluster()
    except SlurmUnavailable as exc:
        print(f"real Slurm: skipped: {exc}")
        return
    dunscaith = str(Path(sys.executable).parent / "dunscaith")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        config = home / ".config" / "dunscaith"
        config.mkdir(parents=True, mode=0o700)
        count = Path(tmp) / "calls"
        bin_dir = make_bin_dir(Path(tmp) / "bin", count_to=count)
        env_table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in cluster.env.items())
        (config / "config.toml").write_text(f'[clusters.test]\nadapter = "slurm"\nbin_dir = "{bin_dir}"\n'
                                            f"env = {{ {env_table} }}\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_")}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                   DUNSCAITH_RECORDS__ROOT=str(Path(tmp) / "records"))
        supervisor = subprocess.Popen([dunscaith, "submit", "--cluster", "test", "--name", "cpu", "--", "sleep",
                                       str(int(window) + 600)], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, cwd=tmp)
        try:
            started = time.monotonic()
            while True:
                shown = subprocess.run([dunscaith, "status", "cpu", "--json"], env=env, capture_output=True,
                                       text=True, cwd=tmp)
                if shown.returncode == 0 and json.loads(shown.stdout)["times"].get("started"):
                    break
                if supervisor.poll() is not None or time.monotonic() - started > 120:
                    print(f"real Slurm: the job did not start (supervisor exit {supervisor.poll()})")
                    return
                time.sleep(1.0)
            time.sleep(5.0)  # past the short polls that follow the start
            cpu0, calls0, wall0 = _tree_cpu(supervisor.pid), len(calls(count)), time.monotonic()
            time.sleep(window)
            cpu1, calls1, wall1 = _tree_cpu(supervisor.pid), len(calls(count)), time.monotonic()
        finally:
            supervisor.terminate()  # the supervisor stops; the job is Slurm's
            supervisor.wait(timeout=60)
            subprocess.run([dunscaith, "cancel", "cpu"], env=env, capture_output=True, cwd=tmp, timeout=120)
        shim = _shim_cost(Path(tmp), dict(os.environ, **cluster.env))
        window_calls = calls(count)[calls0:calls1]
        own, children = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
        cpu, wall = own + children, wall1 - wall0
        polls = sum(1 for c in window_calls if c.split()[0] == "squeue")
        hourly = _polls_in_first_hour()
        print(f"real Slurm, {wall:.0f} s of a running job: {cpu:.3f} s CPU of the supervisor's process tree, "
              f"{len(window_calls)} Slurm calls, {polls} of them squeue")
        print(f"  of which the supervisor itself {own:.3f} s, its reaped children (squeue behind the shim's sh) "
              f"{children:.3f} s")
        print(f"  the window's rate: {cpu / wall * 3600:.3f} s CPU per supervised hour (an upper bound; goal <= 0.3 s)")
        if polls:
            steady = 3600 / 160.0  # a job older than 1,600 s is polled every 160 s (the cap)
            print(f"  per poll: {cpu / polls * 1000:.1f} ms; x {hourly} polls in a job's first hour by the default "
                  f"backoff: {cpu / polls * hourly:.3f} s CPU; x {steady:g} polls in each later hour: "
                  f"{cpu / polls * steady:.3f} s CPU (goal <= 0.3 s per supervised hour)")
            net = cpu / polls - shim
            print(f"  without the counting shim (its sh measured apart: {shim * 1000:.2f} ms per call): "
                  f"{net * 1000:.1f} ms per poll; {net * hourly:.3f} s CPU in a job's first hour, "
                  f"{net * steady:.3f} s in each later hour")


def _shim_cost(tmp: Path, env: dict[str, str], runs: int = 60) -> float:
    """CPU seconds the benchmark's counting shim adds to one Slurm call: the medians of ``squeue --version``
    through the shim and straight, run in turns, each child's own rusage (microseconds, not /proc's ticks)."""
    import statistics
    import subprocess

    from tests.infra.slurm_bin import REAL, make_bin_dir

    shimmed = str(make_bin_dir(tmp / "shim-cost", count_to=tmp / "shim-cost-calls") / "squeue")

    def cost(program: str) -> float:
        child = subprocess.Popen([program, "--version"], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)
        child.returncode = 0  # reaped here: Popen must not wait for it again
        return usage.ru_utime + usage.ru_stime

    through, straight = [], []
    for _ in range(runs):
        through.append(cost(shimmed))
        straight.append(cost(REAL["squeue"]))
    return max(statistics.median(through) - statistics.median(straight), 0.0)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slurm", type=float, metavar="SECONDS", default=None,
                        help="also measure a real Slurm job's supervisor for this long")
    args = parser.parse_args()
    if args.slurm is not None:
        _slurm(args.slurm)
    _measure("fake scheduler (the supervisor alone)", lambda root: FakeScheduler(exit_code_of=lambda spec: None),
             ("true",))
    _measure("local scheduler (the supervisor and its real query)", lambda root: LocalScheduler(root),
             ("sleep", "600"))


if __name__ == "__main__":
    main()
