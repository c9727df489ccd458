"""Benchmark: the supervisor's CPU seconds per 1,000 poll loops.

Runs the real Supervisor on a SQLite store in a temporary record root with a zero poll interval, on a
job that stays running, and counts this process's CPU time (user + system) over the loops: once with
the in-memory fake scheduler (the supervisor's own cost) and once with the local scheduler (its real
query included). Every loop queries here; the real loop backs off with the job's age, so it asks
less. At the default interval of 10 s a supervised hour is 360 loops; the goal is at most 1 s of CPU
per supervised hour. Nothing is asserted.

    .venv/bin/python benchmarks/supervisor_cpu.py
    .venv/bin/python benchmarks/supervisor_cpu.py --slurm 300   # also the real Slurm, 300 s measured

With ``--slurm SECONDS`` (root) it also starts the project's private Slurm (tests/infra/slurm.py) and runs
the real ``dunscaith submit --cluster test -- sleep ...`` with the default settings and the real Slurm
commands (no shim in front of them). Each supervisor runs in a cgroup of its own, so the kernel sums the
CPU of its whole process tree (the supervisor and every squeue it starts) to the nanosecond; the tree
is sampled every 0.2 s once the job runs, each loop's CPU is the rise between quiet samples, and a
loop that ran a squeue (over 1.5 ms) is told from one that did not (the record read for requests and
the lock beaten, at least every supervise.poll). slurmctld counts the squeues (sdiag:
REQUEST_PARTITION_INFO, one per squeue). Per supervised hour: the mean of each kind of loop times how
many of each the supervisor's own schedule makes in a job's first hour and in each later one (each
tree's own: this one's loops only to query, or to report supervised-at every ten poll intervals,
since an append wakes it; 300 s shows both kinds). Without a cgroup, the
/proc counters (10 ms ticks) give a rough figure per poll. ``--compare SOURCE`` runs another source
tree's supervisor beside this one, on the same cluster at the same time: before and after, in one run,
under the same load.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.domain.services.jobs.supervise import SuperviseSettings, Supervisor

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

    def note(self, text: str) -> None:
        pass


class _Loops:
    """Stops the supervisor after ``n`` loops; no sleeping (poll 0)."""

    def __init__(self, n: int) -> None:
        self.left = n

    def pending(self) -> str | None:
        return "SIGTERM" if self.left <= 0 else None

    def wake(self) -> None:
        pass

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
        # A scheduler that watches its objects (the local one) is waited on through its watch, and at poll 0
        # that wait is skipped: _Loops, which counts the waits, would never stop the loop. Each loop's query is
        # what is measured here, so the watch is left out and every loop ends in a (zero) wait that is counted.
        setattr(supervisor.watches, "_watch_objects", lambda watched, cancel: False)  # noqa: B010
        with store.lock(job) as lock:
            for _ in range(200):  # warm up until the job runs: created, released, started
                supervise_one(supervisor, job, lock, _Loops(1))
                current = fold(store.read(job)).current
                if current is not None and current.object_state is ObjectState.RUNNING:
                    break
                time.sleep(0.05)
            start_cpu, start_wall = time.process_time(), time.perf_counter()
            supervise_one(supervisor, job, lock, _Loops(LOOPS))
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
    """(utime + stime, cutime + cstime) of ``pid``: itself, and every child it reaped, in seconds (10 ms ticks)."""
    fields = [int(v) for v in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:15]]
    tick = os.sysconf("SC_CLK_TCK")
    return (fields[0] + fields[1]) / tick, (fields[2] + fields[3]) / tick


class _CpuGroup:
    """A cgroup of its own for one process tree: the kernel sums every task's CPU in it to the nanosecond
    (cgroup v1 ``cpuacct.usage``, or v2 ``cpu.stat`` usage_usec), children included while they run."""

    def __init__(self, name: str) -> None:
        self.path: Path | None = None
        self._v1 = True
        for base, v1 in ((Path("/sys/fs/cgroup/cpuacct"), True), (Path("/sys/fs/cgroup/unified"), False),
                         (Path("/sys/fs/cgroup"), False)):
            probe = base / ("cpuacct.usage" if v1 else "cgroup.procs")
            if not probe.exists():
                continue
            try:
                (base / name).mkdir(exist_ok=True)
            except OSError:
                continue
            self.path, self._v1 = base / name, v1
            break

    def add(self, pid: int) -> bool:
        if self.path is None:
            return False
        try:
            (self.path / "cgroup.procs").write_text(f"{pid}\n")
            return True
        except OSError:
            return False

    def usage(self) -> float:
        """CPU seconds of every task that ran in the group."""
        assert self.path is not None
        if self._v1:
            return int((self.path / "cpuacct.usage").read_text()) / 1e9
        for line in (self.path / "cpu.stat").read_text().splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
        raise OSError("no usage_usec in cpu.stat")

    def remove(self) -> None:
        if self.path is not None:
            try:
                self.path.rmdir()
            except OSError:
                pass


def _loops_per_hour(hour: int, poll: float = DEFAULT_POLL, cap: float = 160.0) -> tuple[int, int]:
    """(queries, loops without a query) in hour ``hour`` (0: the first) of a job that changed at its start,
    by the supervisor's own schedule on its default store (SQLite, whose appends wake the loop): a query
    at each due poll (domain.model.jobs.polling), and a loop without one only when supervised-at is due
    (every ``supervised_every`` poll intervals) and no query came first.
    """
    from datetime import UTC, datetime

    from dunscaith.domain.model.jobs.polling import PollBackoff, next_poll, poll_delay
    from dunscaith.domain.services.jobs.supervise import SuperviseSettings

    backoff = PollBackoff(base=timedelta(seconds=poll), cap=timedelta(seconds=cap))
    refresh = timedelta(seconds=SuperviseSettings().supervised_every * poll)
    changed = datetime(2026, 1, 1, 0, 0, 0, 370_000, tzinfo=UTC)  # the start, off any tick
    asked, quiet, reported = changed, 0, changed
    begin, end = changed + timedelta(hours=hour), changed + timedelta(hours=hour + 1)
    queries = idle = 0
    while True:
        due = next_poll(asked, poll_delay(quiet, asked - changed, backoff))
        now = min(due, reported + refresh)
        if now >= end:
            break
        reported = now
        if now >= due:
            asked, quiet = now, quiet + 1
            queries += now >= begin
        else:
            idle += now >= begin
    return queries, idle


def _schedule_of(source: Path) -> tuple[tuple[int, int], tuple[int, int]]:
    """The first and a later hour's (queries, loops without one) by ``source``'s own benchmark model."""
    code = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/benchmarks']; import supervisor_cpu as b; "
            "print(*b._loops_per_hour(0), *b._loops_per_hour(2))")
    out = subprocess.run([sys.executable, "-c", code, str(source)], capture_output=True, text=True, check=True,
                         cwd=source).stdout.split()
    q0, i0, q1, i1 = (int(word) for word in out)
    return (q0, i0), (q1, i1)


def _squeue_calls(env: dict[str, str]) -> int | None:
    """How many squeues slurmctld has answered: each asks for the partitions (REQUEST_PARTITION_INFO), which
    nothing else of dunscaith's does. Counted by the controller, so nothing is put in front of squeue."""
    shown = subprocess.run(["sdiag"], env=env, capture_output=True, text=True)
    for line in shown.stdout.splitlines():
        if line.strip().startswith("REQUEST_PARTITION_INFO"):
            return int(line.split("count:")[1].split()[0])
    return None


def _bursts(samples: list[float]) -> list[float]:
    """The CPU of each loop: consecutive rising samples merged (a loop caught by two samples is one)."""
    bursts: list[float] = []
    active = False
    for before, after in itertools.pairwise(samples):
        step = after - before
        if step > 0:
            if active:
                bursts[-1] += step
            else:
                bursts.append(step)
            active = True
        else:
            active = False
    return bursts


@dataclass
class _Run:
    """One supervisor measured: its source tree, its process and cgroup, and what was read of them."""

    label: str
    source: Path
    env: dict[str, str]
    proc: subprocess.Popen[bytes]
    group: _CpuGroup
    exact: bool
    job: str
    cpu0: float = 0.0
    cpu1: float = 0.0
    samples: list[float] = field(default_factory=list)


# the console script's own start, in a tree of either layout (the front door since issue 21)
_ENTRY = ("import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'dunscaith'\n"
          "try:\n    from dunscaith.entrypoints.dunscaith.front_door import main\n"
          "except ImportError:\n    from dunscaith.entrypoints.cli_support import dunscaith as main\n"
          "sys.exit(main())")
_LOOP_WITH_SQUEUE = 0.0015  # seconds: a squeue alone costs more; a loop without one, a fraction of a millisecond


def _dunscaith(source: Path, *args: str) -> list[str]:
    """The command line of ``dunscaith ARGS`` run from the source tree ``source``."""
    import sys

    return [sys.executable, "-c", _ENTRY, str(source), *args]


def _slurm(window: float, compare: Path | None) -> None:
    import json
    import statistics
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.infra.slurm import SlurmUnavailable, shared_cluster

    try:
        cluster = shared_cluster()
    except SlurmUnavailable as exc:
        print(f"real Slurm: skipped: {exc}")
        return
    cluster_env = dict(os.environ, **cluster.env)
    here = Path(__file__).resolve().parents[1]
    trees = [("this tree", here)] + ([("compared tree", compare.resolve())] if compare is not None else [])
    with tempfile.TemporaryDirectory() as tmp:
        runs: list[_Run] = []
        for index, (label, source) in enumerate(trees):
            home = Path(tmp) / f"home{index}"
            config = home / ".config" / "dunscaith"
            config.mkdir(parents=True, mode=0o700)
            env_table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in cluster.env.items())
            # the real commands, no shim in front of them: squeues are counted by slurmctld (sdiag)
            (config / "config.toml").write_text(f'[clusters.test]\nadapter = "slurm"\nbin_dir = "/usr/bin"\n'
                                                f"env = {{ {env_table} }}\n")
            env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_")}
            env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                       DUNSCAITH_RECORDS__ROOT=str(Path(tmp) / f"records{index}"))
            job = f"cpu{index}"
            group = _CpuGroup(f"dunscaith-bench-{os.getpid()}-{index}")
            proc = subprocess.Popen(_dunscaith(source, "submit", "--cluster", "test", "--name", job, "--", "sleep",
                                               str(int(window) + 900)),
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
            runs.append(_Run(label, source, env, proc, group, group.add(proc.pid), job))
        try:
            started = time.monotonic()
            for run in runs:
                while True:
                    shown = subprocess.run(_dunscaith(run.source, "status", run.job, "--json"), env=run.env,
                                           capture_output=True, text=True, cwd=tmp)
                    if shown.returncode == 0 and json.loads(shown.stdout)["times"].get("started"):
                        break
                    if run.proc.poll() is not None or time.monotonic() - started > 180:
                        print(f"real Slurm: the job did not start (supervisor exit {run.proc.poll()})")
                        return
                    time.sleep(1.0)
            time.sleep(5.0)  # the polls right after the start are past their shortest
            squeues0 = _squeue_calls(cluster_env)
            for run in runs:
                run.cpu0 = sum(_tree_cpu(run.proc.pid))
            wall0 = time.monotonic()
            while time.monotonic() - wall0 < window:
                for run in runs:
                    if run.exact:
                        run.samples.append(run.group.usage())
                time.sleep(0.2)
            for run in runs:
                if run.exact:
                    run.samples.append(run.group.usage())
                run.cpu1 = sum(_tree_cpu(run.proc.pid))
            squeues1, wall = _squeue_calls(cluster_env), time.monotonic() - wall0
        finally:
            for run in runs:
                run.proc.terminate()  # the supervisor stops; the job is Slurm's
            for run in runs:
                run.proc.wait(timeout=60)
                subprocess.run(_dunscaith(run.source, "cancel", run.job), env=run.env, capture_output=True, cwd=tmp,
                               timeout=120)
                run.group.remove()
    first, later = _loops_per_hour(0), _loops_per_hour(2)
    schedules = {run.source: (first, later) if run.source.resolve() == here else _schedule_of(run.source)
                 for run in runs}
    total_squeues = (squeues1 or 0) - (squeues0 or 0)
    print(f"real Slurm, {wall:.0f} s of a running job ({len(runs)} supervisor(s) side by side, each its own job, "
          f"home and record root; load average {os.getloadavg()[0]:.2f}); squeues slurmctld answered: "
          f"{total_squeues}")
    print(f"  the schedule (domain.model.jobs.polling, supervise.poll {DEFAULT_POLL:g} s): first hour {first[0]} "
          f"queries + {first[1]} loops without one; each later hour {later[0]} + {later[1]}")
    for run in runs:
        if not run.exact:
            ticks = run.cpu1 - run.cpu0
            share = total_squeues / len(runs)
            print(f"  {run.label}: no cgroup to count in: {ticks:.3f} s CPU of the tree from /proc (10 ms ticks), "
                  f"about {ticks / max(share, 1) * 1000:.1f} ms per poll")
            continue
        bursts = _bursts(run.samples)
        polls = [b for b in bursts if b >= _LOOP_WITH_SQUEUE]
        idle = [b for b in bursts if b < _LOOP_WITH_SQUEUE]
        cpu = run.samples[-1] - run.samples[0]
        per_poll = statistics.mean(polls) if polls else 0.0
        per_idle = statistics.mean(idle) if idle else 0.0
        (q0, i0), (q1, i1) = schedules[run.source]
        hour1 = q0 * per_poll + i0 * per_idle
        hour_n = q1 * per_poll + i1 * per_idle
        print(f"  {run.label} ({run.source}): {cpu:.4f} s CPU of the whole tree (cgroup, ns), {len(polls)} loops "
              f"with a squeue, {len(idle)} without")
        median = statistics.median(polls) * 1000 if polls else 0.0
        print(f"    per poll {per_poll * 1000:.2f} ms (median {median:.2f}); per loop without a query "
              f"{per_idle * 1000:.2f} ms" + ("" if idle else " (none in the window: run longer than 200 s)"))
        print(f"    by its schedule ({q0} + {i0} loops in the first hour, {q1} + {i1} later): first hour {hour1:.3f} s "
              f"CPU, each later hour {hour_n:.3f} s (goal <= 0.3 s per supervised hour)")


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slurm", type=float, metavar="SECONDS", default=None,
                        help="also measure a real Slurm job's supervisor for this long (300 s: both kinds of loop)")
    parser.add_argument("--compare", type=Path, metavar="SOURCE", default=None,
                        help="with --slurm: also run the supervisor of another source tree (say, an earlier "
                             "commit's `git archive`) side by side, on the same cluster at the same time")
    args = parser.parse_args()
    if args.slurm is not None:
        _slurm(args.slurm, args.compare)
    _measure("fake scheduler (the supervisor alone)", lambda root: FakeScheduler(exit_code_of=lambda spec: None),
             ("true",))
    _measure("local scheduler (the supervisor and its real query)", lambda root: LocalScheduler(root),
             ("sleep", "600"))


if __name__ == "__main__":
    main()
