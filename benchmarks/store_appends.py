"""Durable appends per second: SqliteStore.append (and PostgresStore.append) against a raw write + fsync loop.

    .venv/bin/python benchmarks/store_appends.py [--count 1000] [--batch 25] [--dir DIR]
                                                 [--postgres-url URL | --postgres-test-server]

Both write one record-sized event line (about 150 bytes of JSON) per step and are on disk when the step
returns: the baseline appends the line to a plain file and fsyncs it (F_FULLFSYNC on macOS); the store
commits it (WAL, synchronous=FULL, BEGIN IMMEDIATE, behind the writers' flock). Both files live in one
fresh directory (default: under /var/tmp, where records live). The two loops run in alternating batches
so that a busy machine slows both alike; the totals give appends per second and the ratio store/raw,
whose goal is >= 0.8. Nothing is asserted.

With ``--postgres-url`` (a database of its own, password-less URL: libpq's ~/.pgpass) or
``--postgres-test-server`` (root: a throwaway PostgreSQL 15 from tests/infra/postgres.py, fsync on, on
loopback), a third loop appends through PostgresStore as a lock holder does (over the lock's own
session, synchronous_commit on) in the same alternating batches, and its ratios to SQLite and raw are
printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dunscaith.adapters.durable.sync import sync_fd
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId

EVENT = {"attempt": 1, "nonce": "5f0c2a9e41b7d3c8", "object": "local-4242", "state": "running", "pad": "x" * 40}
JOB = JobId("bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="appends through each path")
    parser.add_argument("--batch", type=int, default=25, help="appends per batch before switching path")
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp"))
    parser.add_argument("--postgres-url", help="also append through a PostgresStore on this (empty) database")
    parser.add_argument("--postgres-test-server", action="store_true",
                        help="also append through a PostgresStore on a throwaway local PostgreSQL 15 (root)")
    args = parser.parse_args()
    with ExitStack() as stack:
        url = args.postgres_url
        if url is None and args.postgres_test_server:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.infra.postgres import shared_server, stop_shared_server

            server = shared_server()
            stack.callback(stop_shared_server)
            url = server.url(server.new_database("bench"))
        run(args, url)


def run(args: argparse.Namespace, url: str | None) -> None:
    line = json.dumps({"seq": 1, "at": datetime.now(UTC).isoformat(), "kind": "observed", "data": EVENT}) + "\n"
    data = line.encode()
    raw_s = store_s = pg_s = 0.0
    with tempfile.TemporaryDirectory(prefix="dunscaith-bench-", dir=args.dir) as tmp, ExitStack() as stack:
        fd = os.open(Path(tmp) / "raw.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        pg: Any = None
        if url is not None:
            from dunscaith.adapters.store.postgres.store import PostgresStore
            from dunscaith.adapters.store.postgres.target import PostgresTarget

            pg = stack.enter_context(PostgresStore.open(PostgresTarget.from_settings(url)))
            pg.create(JOB, datetime.now(UTC), "created", EVENT)
            stack.enter_context(pg.lock(JOB))  # the holder's appends: over the lock's own session
        with SqliteStore.open(Path(tmp) / "records", SystemHost()) as store:
            store.create(JOB, datetime.now(UTC), "created", EVENT)
            os.write(fd, data)
            sync_fd(fd)  # both files exist and are synced once before timing
            done = 0
            while done < args.count:
                n = min(args.batch, args.count - done)
                start = time.perf_counter()
                for _ in range(n):
                    os.write(fd, data)
                    sync_fd(fd)
                raw_s += time.perf_counter() - start
                start = time.perf_counter()
                for _ in range(n):
                    store.append(JOB, datetime.now(UTC), "observed", EVENT)
                store_s += time.perf_counter() - start
                if pg is not None:
                    start = time.perf_counter()
                    for _ in range(n):
                        pg.append(JOB, datetime.now(UTC), "observed", EVENT)
                    pg_s += time.perf_counter() - start
                done += n
        os.close(fd)
    raw, stored = args.count / raw_s, args.count / store_s
    where = f"{SystemHost().filesystem(args.dir).name} ({args.dir})"
    print(f"{args.count} appends each, in alternating batches of {args.batch}, on {where}")
    print(f"raw write+fsync       {raw:10.0f} appends/s")
    print(f"SqliteStore.append    {stored:10.0f} appends/s")
    print(f"ratio store/raw       {stored / raw:10.2f}   (goal >= 0.8)")
    if pg_s:
        pg_rate = args.count / pg_s
        print(f"PostgresStore.append  {pg_rate:10.0f} appends/s   (lock holder, loopback, {url_shown(url)})")
        print(f"ratio postgres/sqlite {pg_rate / stored:10.2f}")
        print(f"ratio postgres/raw    {pg_rate / raw:10.2f}")


def url_shown(url: str | None) -> str:
    if url is None:
        return ""
    from dunscaith.adapters.store.postgres.target import PostgresTarget

    return PostgresTarget.from_settings(url).location()


if __name__ == "__main__":
    main()
