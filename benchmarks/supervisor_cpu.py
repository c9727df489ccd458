"""Benchmark: the supervisor's CPU seconds per 1,000 poll loops.

Runs the real Supervisor on a SQLite store in a temporary record root with a zero poll interval, on a
job that stays running, and counts this process's CPU time (user + system) over the loops: once with
the in-memory fake scheduler (the supervisor's own cost) and once with the local scheduler (its real
query included). Every loop queries here; the real loop backs off with the job's age, so it asks
less. At the default interval of 10 s a supervised hour is 360 loops; the goal is at most 1 s of CPU
per supervised hour. Nothing is asserted.

    .venv/bin/python benchmarks/supervisor_cpu.py
"""

from __future__ import annotations

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


def main() -> None:
    _measure("fake scheduler (the supervisor alone)", lambda root: FakeScheduler(exit_code_of=lambda spec: None),
             ("true",))
    _measure("local scheduler (the supervisor and its real query)", lambda root: LocalScheduler(root),
             ("sleep", "600"))


if __name__ == "__main__":
    main()
