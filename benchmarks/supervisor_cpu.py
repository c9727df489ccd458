"""Benchmark: the supervisor's CPU seconds per 1,000 poll loops.

Runs the real Supervisor on a SQLite store in a temporary record root, with the in-memory fake
scheduler (so the scheduler's own cost is not counted) and a zero poll interval, on a job that stays
running; counts process CPU time (user + system) over the loops. At the default interval of 10 s a
supervised hour is 360 loops; the goal is at most 1 s of CPU per supervised hour. Nothing is asserted.

    .venv/bin/python benchmarks/supervisor_cpu.py
"""

from __future__ import annotations

import tempfile
import time
from datetime import timedelta
from pathlib import Path

from adapters.clock.system import SystemClock
from adapters.host.system import SystemHost
from adapters.scheduler.fake import FakeScheduler
from adapters.store.sqlite.store import SqliteStore
from domain.model.jobs.ids import JobId
from domain.model.jobs.policy import Policy
from domain.model.jobs.spec import JobSpec
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

    def requested(self) -> bool:
        return self.left <= 0

    def wait(self, seconds: float) -> bool:
        self.left -= 1
        return self.left <= 0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore.open(Path(tmp) / "records", SystemHost())
        scheduler = FakeScheduler(exit_code_of=lambda spec: None)  # runs forever
        clock = SystemClock()
        job = RecordJob(store, clock, _NoCrash())(JobSpec(JobId("cpu"), "local", "local", ("true",)))
        supervisor = Supervisor(store, scheduler, clock, _NoCrash(), _Quiet(),
                                SuperviseSettings(poll=0.0, giveup=3600.0, wait=0.0),
                                Policy(absence_deadline=timedelta(hours=1)))
        with store.lock(job) as lock:
            supervisor.run(job, lock, _Loops(5))  # warm up: created, released, running
            start_cpu, start_wall = time.process_time(), time.perf_counter()
            supervisor.run(job, lock, _Loops(LOOPS))
            cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start_wall
        store.close()
    per_hour = cpu / LOOPS * (3600 / DEFAULT_POLL)
    print(f"supervisor: {cpu:.3f} s CPU per {LOOPS} poll loops ({wall:.3f} s wall), queries: "
          f"{scheduler.count('query')}")
    print(f"at poll = {DEFAULT_POLL:g} s: {per_hour:.3f} s CPU per supervised hour (goal <= 1 s)")


if __name__ == "__main__":
    main()
