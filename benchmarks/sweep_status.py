"""`dunscaith status NAME` of a 1,000-element sweep against `status JOB` of one job (issue 23).

Run: .venv/bin/python benchmarks/sweep_status.py [--runs 9] [--elements 1000]

One SQLite store is built through the store's own port in a temporary record root: a job of its own
(finished) and a sweep `exp` of --elements elements, as `submit --array` records them: all but 20
succeeded, 13 failed, 7 still running with no supervisor (so both commands print the Unattended notice
and probe those locks, as a user would see it mid-sweep). Then the whole `dunscaith status exp` and
`dunscaith status solo` processes are timed, interleaved, medians of --runs: wall time, and CPU (user +
system, from wait4), which a loaded machine disturbs less. Goal: the sweep <= 1.5x the one job.

`status NAME` reads the elements' summaries in one query (no fold); a store that does not keep the sweep
beside each summary yet cannot answer it: the script then says so and stops.
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
from dunscaith.domain.model.jobs.sweeps import SweepMember

BIN = Path(sys.executable).parent
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _story(n: int, end: str | None) -> list[ev.Event]:
    oid = ObjectId(str(10_000 + n))
    story: list[ev.Event] = [ev.Submitting(1, Nonce(f"nonce-{n}")), ev.Created(1, oid), ev.Confirmed(1, oid),
                             ev.Released(1, oid, None, None), ev.Observed(1, oid, "running", None, None, "")]
    if end == "succeeded":
        story += [ev.Observed(1, oid, "completed", 0, None, ""), ev.OutcomeReached("succeeded", "exit code 0"),
                  ev.Settled()]
    elif end == "failed":
        story += [ev.Observed(1, oid, "failed", 3, None, ""), ev.OutcomeReached("failed", "failed, exit code 3"),
                  ev.Settled()]
    return story


def _build(root: Path, elements: int) -> None:
    with SqliteStore.open(root, SystemHost()) as store, store.batch():
        def record(job: JobId, member: SweepMember | None, story: list[ev.Event]) -> None:
            spec = JobSpec(job, "local", "local", ("true",), member=member)
            store.create(job, T0, *ev.encode(ev.JobRecorded.of(spec, store.identity())))
            for n, event in enumerate(story, start=1):
                store.append(job, T0 + timedelta(milliseconds=n), *ev.encode(event))

        record(JobId("solo"), None, _story(0, "succeeded"))
        for index in range(elements):
            end = "running" if index >= elements - 7 else "failed" if index >= elements - 20 else "succeeded"
            record(JobId(f"exp-{index}"), SweepMember(JobId("exp"), index), _story(index + 1, end))


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--elements", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root, home = Path(scratch) / "root", Path(scratch) / "home"
        home.mkdir(mode=0o700)
        _build(root, args.elements)
        here = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env = {**here, "HOME": str(home), "XDG_CONFIG_HOME": f"{home}/.config", "XDG_CACHE_HOME": f"{home}/.cache",
               "DUNSCAITH_RECORDS__ROOT": str(root), "NO_COLOR": "1"}
        commands = {"status solo": [str(BIN / "dunscaith"), "status", "solo"],
                    "status exp": [str(BIN / "dunscaith"), "status", "exp"]}
        for name, argv in commands.items():  # once each first: caches warm, the settings cache built
            *_, code = _run(argv, env)
            if code not in (0, 1):
                done = subprocess.run(argv, env=env, capture_output=True, text=True)
                raise SystemExit(f"{name} exited {code}: {done.stderr.strip()} (a store that does not keep the "
                                 "sweep beside each summary cannot answer `status NAME` yet)")
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                wall, cpu, _code = _run(argv, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; medians of {args.runs} interleaved runs")
    wall0, cpu0 = statistics.median(walls["status solo"]), statistics.median(cpus["status solo"])
    for name in commands:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"  {name:>12}: wall {wall * 1000:6.0f} ms ({wall / wall0:4.2f}x)  CPU {cpu * 1000:6.0f} ms "
              f"({cpu / cpu0:4.2f}x)")
    print(f"goal: status of a {args.elements:,}-element sweep <= 1.5x status of one job")


if __name__ == "__main__":
    main()
