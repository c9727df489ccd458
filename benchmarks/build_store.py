"""Build a large record store through the store's own port, for the status and list benchmarks.

Every job gets the nine events a finished job has (recorded, submitting, created, confirmed, released,
running, completed, its outcome, settled), appended through ``JobStore.create``/``append`` as the
supervisor appends them, so every summary is kept by the same code as in use. ``batch()`` groups a
thousand jobs in one transaction (one fsync instead of nine thousand): the only difference from a
supervisor's appends. The last ``--open`` jobs stay unsettled (running, no supervisor: Unattended).

    .venv/bin/python benchmarks/build_store.py ROOT --jobs 100000 [--open 3] [--backend sqlite|postgresql]

ROOT is a record root (``records.root``); for PostgreSQL pass ``--url`` instead. Prints how long it took.

With ``--pointers HOME`` it also writes each job's pointer into ``HOME/.config/dunscaith/jobs``, through
the Pointers port (``FilePointers``, so the index of pointers not settled is kept by the same code as in
use): a finished job's pointer says ``succeeded``, an unsettled one's ``running`` with no supervisor seen
(as a home holds them until the jobs are pruned: most settled, a few with work). ``--pointers-only``
writes the pointers of a store built earlier, without touching it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dunscaith.adapters.host.system import SystemHost
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.ports.job_store import JobStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
BATCH = 1000


def job_name(i: int) -> JobId:
    return JobId(f"job-{i:07d}")


def finished_events(i: int, settled: bool) -> list[ev.Event]:
    nonce, oid = Nonce(f"nonce-{i}"), ObjectId(f"{1000 + i}")
    story: list[ev.Event] = [ev.Submitting(1, nonce), ev.Created(1, oid), ev.Confirmed(1, oid), ev.Released(1, oid),
                             ev.Observed(1, oid, "running", None, None, "")]
    if settled:
        story += [ev.Observed(1, oid, "completed", 0, None, ""), ev.OutcomeReached("succeeded", "exit 0"),
                  ev.Settled()]
    return story


def add_job(store: JobStore, i: int, settled: bool = True) -> None:
    job = job_name(i)
    at = T0 + timedelta(seconds=i)
    head = ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)), store.identity())
    store.create(job, at, *ev.encode(head))
    for n, event in enumerate(finished_events(i, settled), start=1):
        store.append(job, at + timedelta(milliseconds=n), *ev.encode(event))


def write_pointers(home: Path, store_location: str, jobs: int, unsettled: int = 0) -> None:
    from dunscaith.adapters.pointers.files import FilePointers
    from dunscaith.domain.model.jobs.pointer import Pointer

    host = SystemHost().identity()
    pointers = FilePointers(home / ".config" / "dunscaith" / "jobs")
    binary = str(Path(sys.executable).parent / "dunscaith")
    for i in range(jobs):
        settled = i < jobs - unsettled
        pointers.write(Pointer(job_name(i), host.hostname, store_location, host, binary, "local", "local",
                               "succeeded" if settled else "running", T0 + timedelta(seconds=i), None))
    pointers.index_built()


def build(store: JobStore, jobs: int, unsettled: int = 0, start: int = 0) -> None:
    end = start + jobs
    for first in range(start, end, BATCH):
        with store.batch():
            for i in range(first, min(first + BATCH, end)):
                add_job(store, i, settled=i < end - unsettled)


@contextmanager
def open_store(backend: str, root: Path | None, url: str | None) -> Iterator[JobStore]:
    if backend == "sqlite":
        from dunscaith.adapters.store.sqlite.store import SqliteStore

        assert root is not None, "a record root is needed"
        with SqliteStore.open(root, SystemHost()) as store:
            yield store
    elif backend == "postgresql":
        from dunscaith.adapters.store.postgres.store import PostgresStore
        from dunscaith.adapters.store.postgres.target import PostgresTarget

        assert url is not None, "a records.url is needed"
        with PostgresStore.open(PostgresTarget.from_settings(url)) as pg:
            yield pg
    else:
        raise SystemExit(f"backend {backend}: not in this build (sqlite, postgresql)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, nargs="?")
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--open", type=int, default=0, help="how many of the newest jobs stay unsettled")
    parser.add_argument("--backend", default="sqlite")
    parser.add_argument("--url")
    parser.add_argument("--pointers", type=Path, metavar="HOME", help="also write each job's pointer under HOME")
    parser.add_argument("--pointers-only", action="store_true", help="write the pointers only (a store built before)")
    args = parser.parse_args()
    started = time.perf_counter()
    with open_store(args.backend, args.root, args.url) as store:
        if not args.pointers_only:
            build(store, args.jobs, args.open)
        location = store.location()
    took = time.perf_counter() - started
    if not args.pointers_only:
        print(f"{args.jobs} jobs ({9 * args.jobs - 3 * args.open} events) in {took:.1f} s "
              f"({args.jobs / took:.0f} jobs/s)")
    if args.pointers is not None:
        started = time.perf_counter()
        write_pointers(args.pointers, location, args.jobs, args.open)
        took = time.perf_counter() - started
        print(f"{args.jobs} pointers ({args.open} not settled) in {took:.1f} s ({args.jobs / took:.0f}/s)")


if __name__ == "__main__":
    main()
