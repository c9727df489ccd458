"""Issue 26's store goals in one run, one table: a PostgreSQL supervisor woken by the server, the
Unattended notice at 10k unsettled jobs, an append beside a long record.

    .venv/bin/python benchmarks/store_wake.py [--runs 5] [--jobs 10000] [--events 100000] [--only NAME]

- ``cancel``: ``dunscaith cancel JOB --json`` typed on another login node (its own records.root) for a job
  whose supervisor, on a PostgreSQL store, sleeps to its next poll (supervise.poll 3600, asleep for at
  least 15 s by its lock): from its request committed to the supervisor's answer committed (the two
  events' times in the record, one host's clock), "confirmed by its supervisor"; the whole command too
  (it waits on until the job is stopped). Beside it, ``dunscaith status`` of the same job in the same run
  (a command's own cost). Goal: the answer ≤ 1 s.
- ``notice``: ``dunscaith status JOB`` on a PostgreSQL store with 10,000 unsettled jobs and no
  supervisor (the notice names and lock-checks every one) against one with 10, interleaved. Goal ≤ 1.2×.
- ``append``: one append by a new store handle (a command's: no fold carried) beside a record of
  100,000 events against one beside a 10-event record, alternating, through each SQL store. Neither the
  open nor the handle's first write (to a third job: the connection, SQLite's integrity check before a
  handle's first write) is timed. Goal ≤ 1.5×.

``--generic-names``: the same figures for a tree from before the one import name ``dunscaith`` (21d1aaf),
run by that tree's own interpreter (``../base/.venv/bin/python benchmarks/store_wake.py --generic-names``):
its packages are imported as this file's ``dunscaith.*``, its console script is the one measured, and its
supervisor, which no server wakes, answers at its next loop: supervise.poll at its default, 10 s.

A throwaway PostgreSQL 15 is started from tests/infra/postgres.py (root). Medians are printed; nothing is
asserted. Run with bytecode written (unset PYTHONDONTWRITEBYTECODE), as an installed dunscaith runs.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# A tree from before the one import name (21d1aaf: its packages are domain, ports, adapters, ...), run by its
# own interpreter: ``dunscaith.X`` below is its ``X``, the very module objects, so this file measures it as is.
# This tree's folders of the same names must not shadow it: its tree (the interpreter's .venv's) comes first,
# and only tests.infra is wanted from here.
GENERIC_NAMES = "--generic-names" in sys.argv
if GENERIC_NAMES:
    sys.path[:0] = [str(Path(sys.executable).parents[2])]
    sys.path.append(str(ROOT))
else:
    sys.path.insert(0, str(ROOT))


class _GenericNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name != "dunscaith" and not name.startswith("dunscaith."):
            return None
        return importlib.util.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == "dunscaith":
            return types.ModuleType("dunscaith")
        return importlib.import_module(spec.name.removeprefix("dunscaith."))

    def exec_module(self, module: types.ModuleType) -> None:
        pass  # made whole by its own import


if GENERIC_NAMES:
    sys.meta_path.insert(0, _GenericNames())

import psycopg  # noqa: E402

from dunscaith.adapters.host.system import SystemHost  # noqa: E402
from dunscaith.adapters.store.event_codec import encode_data, encode_time  # noqa: E402
from dunscaith.adapters.store.postgres.store import PostgresStore  # noqa: E402
from dunscaith.adapters.store.postgres.target import PostgresTarget  # noqa: E402
from dunscaith.adapters.store.sqlite.store import SqliteStore  # noqa: E402
from dunscaith.domain.model.jobs import events as ev  # noqa: E402
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId  # noqa: E402
from dunscaith.domain.model.jobs.snapshot import EVERY  # noqa: E402
from dunscaith.domain.model.jobs.spec import JobSpec  # noqa: E402
from dunscaith.ports.job_store import JobStore  # noqa: E402

BIN = Path(sys.executable).parent / "dunscaith"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
GOALS = {"cancel": 1.0, "notice": 1.2, "append": 1.5}


def _env(home: Path, url: str, root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": f"{home}/.config", "XDG_CACHE_HOME": f"{home}/.cache",
                "DUNSCAITH_RECORDS__ROOT": str(root), "DUNSCAITH_RECORDS__BACKEND": "postgresql",
                "DUNSCAITH_RECORDS__URL": url, **extra})
    return env


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)
    return time.perf_counter() - start, done


def _await(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.2)


# --- cancel: a supervisor asleep, woken by the server ------------------------------------------------

def cancel(url: str, tmp: Path, runs: int, poll: int) -> tuple[float, float]:
    here = _env(tmp / "home", url, tmp / "login1")
    there = _env(tmp / "home2", url, tmp / "login2")
    answers: list[float] = []
    commands: list[float] = []
    statuses: list[float] = []
    for n in range(runs):
        job = f"wake-{n}"
        supervisor = subprocess.Popen([str(BIN), "submit", "--name", job, "--", "sleep", "600"],
                                      env={**here, "DUNSCAITH_SUPERVISE__POLL": str(poll)},
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

        def asleep(job: str = job) -> bool:
            done = subprocess.run([str(BIN), "status", job, "--json"], env=there, capture_output=True, text=True,
                                  check=False)
            if done.returncode != 0:
                return False
            if poll < 15:  # a tree with no wake: its loops are every supervise.poll once the job has run a while
                shown = json.loads(done.stdout)
                last = (shown.get("supervisor") or {}).get("last_loop")
                started = (shown.get("times") or {}).get("started")
                return bool(last and started and (datetime.fromisoformat(last)
                                                  - datetime.fromisoformat(started)).total_seconds() >= 2 * poll)
            loop = json.loads(done.stdout).get("supervisor") or {}
            if not loop.get("last_loop") or not loop.get("next_loop"):
                return False
            gap = datetime.fromisoformat(loop["next_loop"]) - datetime.fromisoformat(loop["last_loop"])
            return bool(gap.total_seconds() >= 15)

        _await(asleep, 180, f"{job}'s supervisor asleep to its next poll")
        seconds, done = _timed([str(BIN), "cancel", job, "--json"], {**there, "DUNSCAITH_COMMANDS__WAIT": "30"})
        answer = json.loads(done.stdout)
        if (answer.get("answer"), answer.get("by")) != ("confirmed", "its supervisor"):
            raise SystemExit(f"cancel of {job} was not answered by its supervisor: {done.stdout} {done.stderr}")
        with PostgresStore.open(PostgresTarget.from_settings(url)) as store:
            lines = store.read(JobId(job)).events
        asked = next(line.at for line in lines if line.kind == ev.Requested.KIND)
        answered = next(line.at for line in lines if line.kind == ev.Answered.KIND)
        answers.append((answered - asked).total_seconds())
        commands.append(seconds)
        statuses.append(_timed([str(BIN), "status", job], there)[0])
        supervisor.wait(timeout=120)
    print(f"cancel typed on another login node: its request committed to its answer committed (the record's "
          f"times) {statistics.median(answers) * 1000:.0f} ms; the whole command, until the job was stopped, "
          f"{statistics.median(commands) * 1000:.0f} ms", flush=True)
    return statistics.median(answers), statistics.median(statuses)


# --- notice: status with 10k unsettled jobs against 10 --------------------------------------------------

def _unsettled(store: JobStore, jobs: int) -> None:
    with store.batch():
        for n in range(jobs):
            job = JobId(f"bench-{n:05d}")
            at = T0 + timedelta(seconds=n)
            store.create(job, at, *ev.encode(ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)),
                                                               store.identity())))
            store.append(job, at, *ev.encode(ev.Submitting(1, Nonce(f"n{n}"))))
            store.append(job, at, *ev.encode(ev.Created(1, ObjectId(f"local-{n}"))))


def notice(server: Any, tmp: Path, jobs: int, runs: int) -> tuple[float, float]:
    urls = {}
    for count in (10, jobs):
        urls[count] = server.url(server.new_database(f"notice{count}"))
        with PostgresStore.open(PostgresTarget.from_settings(urls[count])) as store:
            _unsettled(store, count)
    times: dict[int, list[float]] = {10: [], jobs: []}
    for _ in range(runs):
        for count, url in urls.items():
            env = _env(tmp / f"home-notice-{count}", url, tmp / f"notice-{count}")
            seconds, done = _timed([str(BIN), "status", "bench-00000"], env)
            if done.returncode != 0 or done.stderr.count("Unattended") != count - 1:  # all but the one shown
                raise SystemExit(f"status at {count} jobs: exit {done.returncode}, "
                                 f"{done.stderr.count('Unattended')} notice lines: {done.stderr[-600:]}")
            times[count].append(seconds)
    return statistics.median(times[10]), statistics.median(times[jobs])


# --- append: beside a long record against a short one ------------------------------------------------

def _long_record(store: JobStore, job: JobId, events: int) -> None:
    """A job of ``events`` events: recorded, submitted, released, then observed over and over. Written
    through the store's own appends for its first few, then the rest in bulk and the summaries (and
    snapshots) rebuilt from the events, as doctor does: a hundred thousand appends in one transaction
    would each rewrite the job's summary row."""
    first: list[ev.Event] = [ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)), store.identity()),
             ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("o1")), ev.Confirmed(1, ObjectId("o1")),
             ev.Released(1, ObjectId("o1"))]
    store.create(job, T0, *ev.encode(first[0]))
    for event in first[1:]:
        store.append(job, T0, *ev.encode(event))
    rows = []
    for i in range(events - len(first)):
        kind, data = ev.encode(ev.Observed(1, ObjectId("o1"), ("pending", "running")[i % 2], None, None, ""))
        rows.append((len(first) + 1 + i, encode_time(T0 + timedelta(seconds=i)), kind, encode_data(data)))
    if isinstance(store, PostgresStore):
        with psycopg.connect(store.target.url, autocommit=True) as conn, conn.transaction():
            (job_id,) = conn.execute("SELECT id FROM jobs WHERE name = %s", (job,)).fetchone() or (0,)
            with conn.cursor().copy("COPY events (job_id, seq, at, kind, data) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row((job_id, *row))
    else:
        assert isinstance(store, SqliteStore)
        db = sqlite3.connect(store.db_path)
        with db:
            (job_id,) = db.execute("SELECT id FROM jobs WHERE name = ?", (job,)).fetchone()
            db.executemany("INSERT INTO events (job_id, seq, at, kind, data) VALUES (?, ?, ?, ?, ?)",
                           [(job_id, *row) for row in rows])
        db.close()
    store.rebuild_summaries()


def append(opener: Callable[[], Any], events: int, runs: int) -> tuple[float, float]:
    short, long, other = JobId("short"), JobId("long"), JobId("other")
    with opener() as store:
        _long_record(store, other, 10)
        _long_record(store, short, 10)
        _long_record(store, long, events)
        assert store.read_tail(long).after == events - events % EVERY  # the snapshot an append resumes from
    times: dict[JobId, list[float]] = {short: [], long: []}
    for n in range(runs):
        for job in (short, long) if n % 2 == 0 else (long, short):
            with opener() as store:  # a command's handle: it carries no fold of the job
                # its first write elsewhere: the connection made, SQLite's check before a handle's first write
                store.append(other, T0 + timedelta(days=1, seconds=n), *ev.encode(ev.Absent(1)))
                start = time.perf_counter()
                store.append(job, T0 + timedelta(days=1, seconds=n), *ev.encode(ev.Requested(f"r{n}", "hold")))
                times[job].append(time.perf_counter() - start)
    return statistics.median(times[short]), statistics.median(times[long])


@contextmanager
def _server() -> Iterator[Any]:
    from tests.infra.postgres import shared_server, stop_shared_server

    try:
        yield shared_server()
    finally:
        stop_shared_server()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--only", action="append", default=[], choices=sorted(GOALS))
    parser.add_argument("--generic-names", action="store_true",
                        help="measure a tree from before the one import name and the server's wake (run by its "
                             "own .venv's python): its supervisor's loop is supervise.poll's default, 10 s")
    args = parser.parse_args()
    wanted = args.only or list(GOALS)
    rows: list[tuple[str, str, float, float]] = []
    with ExitStack() as stack:
        server = stack.enter_context(_server())
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dunscaith-bench-", dir="/var/tmp")))
        if "cancel" in wanted:
            poll = 10 if args.generic_names else 3600
            answered, status = cancel(server.url(server.new_database("wake")), tmp, args.runs, poll)
            print(f"cancel from another login node, supervisor asleep (PostgreSQL): {answered * 1000:.0f} ms to its "
                  f"answer; status of the job {status * 1000:.0f} ms (median of {args.runs})", flush=True)
            rows.append(("cancel: request to its answer, s (status beside)", f"{status:.3f} s", answered, answered))
        if "notice" in wanted:
            small, large = notice(server, tmp, args.jobs, args.runs)
            print(f"status with the notice, PostgreSQL: 10 unsettled jobs {small * 1000:.0f} ms, {args.jobs} "
                  f"{large * 1000:.0f} ms, ratio {large / small:.2f} (median of {args.runs})", flush=True)
            rows.append((f"notice: status at {args.jobs} / 10 unsettled jobs", f"{small * 1000:.0f} ms",
                         large, large / small))
        if "append" in wanted:
            # near the worst case: each timed append lands after EVERY - 1 - runs..EVERY - 2 events past the
            # snapshot (the longest tails that none of the timed appends makes due)
            runs = max(args.runs, 9)
            events = args.events + (EVERY - 1 - runs - args.events % EVERY) % EVERY
            url = server.url(server.new_database("append"))
            for name, opener in (("PostgreSQL", lambda: PostgresStore.open(PostgresTarget.from_settings(url))),
                                 ("SQLite", lambda: SqliteStore.open(tmp / "append-sqlite", SystemHost()))):
                small, large = append(opener, events, runs)
                print(f"append by a new handle, {name}: beside a 10-event record {small * 1000:.2f} ms, beside "
                      f"{events} events ({events % EVERY}-{events % EVERY + runs - 1} after the snapshot) "
                      f"{large * 1000:.2f} ms, ratio "
                      f"{large / small:.2f}", flush=True)
                rows.append((f"append beside {events} / 10 events, {name}", f"{small * 1000:.2f} ms",
                             large, large / small))
    print(f"\n===== issue 26's store goals, one run (load average {os.getloadavg()[0]:.2f})")
    unmet = 0
    for name, beside, figure, ratio in rows:
        goal = GOALS["cancel" if name.startswith("cancel") else "notice" if name.startswith("notice") else "append"]
        met = ratio <= goal
        unmet += not met
        shown = f"{figure:.3f} s" if name.startswith("cancel") else f"{ratio:.2f}x"
        unit = " s" if name.startswith("cancel") else "x"
        print(f"  {name:<48} {shown:>9}   beside {beside:>9}   goal <= {goal:g}{unit}   {'met' if met else 'NOT MET'}")
    return 0 if unmet == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
