"""``dunscaith status JOB`` and ``dunscaith list`` wall time on 10,000 jobs: SQLite against PostgreSQL.

    .venv/bin/python benchmarks/store_listing.py [--jobs 10000] [--runs 3] [--postgres-url URL]

Both stores are filled through the stores themselves with the same records (each job: recorded,
submitting, created, confirmed, released, observed running, outcome, settled), then the real console
script runs ``status`` on one job and ``list`` on all, interleaved, so a busy machine slows both
alike. Without ``--postgres-url`` (a database of its own), a throwaway PostgreSQL 15 is started from
tests/infra/postgres.py (root). Medians are printed with the ratio PostgreSQL / SQLite. With
``--before TREE`` (a source tree of an earlier commit) both commands also run from that tree
(``PYTHONPATH``), interleaved, and the ratio now / before is printed. Nothing is asserted.

    .venv/bin/python benchmarks/store_listing.py [--before TREE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId

BIN = Path(sys.executable).parent / "dunscaith"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _fill(store: Any, jobs: int) -> None:
    from dunscaith.domain.model.jobs import events as ev
    from dunscaith.domain.model.jobs.ids import Nonce, ObjectId
    from dunscaith.domain.model.jobs.spec import JobSpec

    for n in range(jobs):
        job = JobId(f"bench-{n:05d}")
        at = T0 + timedelta(seconds=n)
        kind, data = ev.encode(ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)), store.identity()))
        store.create(job, at, kind, data)
        oid = ObjectId(f"local-{n}")
        for event in (ev.Submitting(1, Nonce(f"n{n}")), ev.Created(1, oid)):
            kind, data = ev.encode(event)
            store.append(job, at, kind, data)


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--postgres-url")
    parser.add_argument("--before", type=Path, metavar="TREE")
    args = parser.parse_args()
    with ExitStack() as stack:
        url = args.postgres_url
        if url is None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.infra.postgres import shared_server, stop_shared_server

            server = shared_server()
            stack.callback(stop_shared_server)
            url = server.url(server.new_database("listing"))
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="dunscaith-bench-", dir="/var/tmp"))
        base = {**os.environ, "HOME": tmp, "XDG_CONFIG_HOME": f"{tmp}/.config"}
        envs = {
            "sqlite": {**base, "DUNSCAITH_RECORDS__ROOT": f"{tmp}/records"},
            "postgresql": {**base, "DUNSCAITH_RECORDS__ROOT": f"{tmp}/pg-root",
                           "DUNSCAITH_RECORDS__BACKEND": "postgresql", "DUNSCAITH_RECORDS__URL": url},
        }
        if args.before is not None:
            envs.update({f"{name} before": {**env, "PYTHONPATH": str(args.before)} for name, env in list(envs.items())})
        start = time.perf_counter()
        with SqliteStore.open(Path(tmp) / "records", SystemHost()) as sqlite:
            _fill(sqlite, args.jobs)
        filled_sqlite = time.perf_counter() - start
        start = time.perf_counter()
        with PostgresStore.open(PostgresTarget.from_settings(url)) as pg:
            _fill(pg, args.jobs)
        filled_pg = time.perf_counter() - start
        times: dict[tuple[str, str], list[float]] = {}
        last = f"bench-{args.jobs - 1:05d}"
        for _ in range(args.runs):
            for backend, env in envs.items():
                times.setdefault((backend, "status"), []).append(_time([str(BIN), "status", last], env))
                times.setdefault((backend, "list"), []).append(_time([str(BIN), "list"], env))
    print(f"{args.jobs} jobs of 3 events each; filled in {filled_sqlite:.1f} s (SQLite), {filled_pg:.1f} s "
          f"(PostgreSQL, loopback)")
    for command in ("status", "list"):
        s = statistics.median(times[("sqlite", command)])
        p = statistics.median(times[("postgresql", command)])
        print(f"dunscaith {command:6s}  SQLite {s * 1000:8.0f} ms   PostgreSQL {p * 1000:8.0f} ms   "
              f"ratio {p / s:5.2f}   (median of {args.runs})")
        if args.before is not None:
            for backend in ("sqlite", "postgresql"):
                now = statistics.median(times[(backend, command)])
                then = statistics.median(times[(f"{backend} before", command)])
                print(f"  {backend:10s} now {now * 1000:8.0f} ms   before {then * 1000:8.0f} ms   "
                      f"ratio {now / then:5.2f}")


if __name__ == "__main__":
    main()
