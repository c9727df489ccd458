"""SqliteStore: a job's record as rows in one SQLite file of the record root; its lock, an flock beside it."""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from dunscaith.adapters.durable.lock import FlockLock, LockHeld, is_held
from dunscaith.adapters.durable.private_dir import UnsafeDirectory, ensure_private_dir
from dunscaith.adapters.store.event_codec import encode_data, encode_time
from dunscaith.adapters.store.held_locks import Held, each_in_turn
from dunscaith.adapters.store.record_root import RecordRoot, open_record_root
from dunscaith.adapters.store.sqlite import STORE_FILE
from dunscaith.adapters.store.sqlite.append_watch import SharedAppendWatches, watch_database
from dunscaith.adapters.store.sqlite.engine import connect, connect_unlocked, describe_sqlite_error, files_now
from dunscaith.adapters.store.sqlite.locks import FlockJobLock, lock_file_name, read_beat
from dunscaith.adapters.store.sqlite.opening import (
    StoreRefused,
    check_existing,
    create_exclusively,
    created_whole,
    finish_interrupted_creation,
    no_room,
    no_room_said,
    quick_check,
    recovery_advice,
)
from dunscaith.adapters.store.sqlite.schema import ensure_schema, require_head
from dunscaith.adapters.store.subscription import Subscription
from dunscaith.adapters.store.summary_rows import (
    COLUMNS,
    EPOCH,
    SQL_EVERY_EVENT,
    Carries,
    Line,
    Written,
    append_all,
    carry_of,
    checked_lines,
    from_row,
    newest_first,
    snapshot_of,
    to_row,
    where,
)
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.attendance import unattended_among
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import JobRecord, LoopHealth, RecordTail, StoreIdentity
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery, UnattendedJob, unreadable
from dunscaith.ports.host import HostInfo
from dunscaith.ports.job_store import Append, JobExists, LockBusy, RecordDamaged, StoreError, StoreMissing, UnknownJob

DB_FILE = STORE_FILE
SCHEMA_LOCK = "schema.lock"
WRITE_LOCK = "write.lock"
LOCKS_DIR = "locks"
DEFAULT_BUSY_TIMEOUT_MS = 60_000  # a loaded login node: a writer waits its turn rather than fail
# A probe of the lock (health, from another process) holds a shared flock for an instant; a taker
# that meets one retries briefly instead of reporting a live holder that is not there.
_LOCK_RETRIES = (0.005, 0.01, 0.02, 0.04)
_TURN_POLL_MAX = 0.005

# The store's statements, plain SQL on sqlite3 (tables.py declares the tables for alembic): through
# SQLAlchemy Core an append cost about 0.3 ms of CPU (measured, fsync off) against 0.07 ms here, more
# than the fsync it waits for on a fast disk, and importing SQLAlchemy was most of a cold ``status``.
# One lookup and one insert per append: the job's key, and its last seq from the primary key.
_SQL_JOB_AND_LAST_SEQ = (
    "SELECT id, (SELECT max(seq) FROM events WHERE events.job_id = jobs.id) FROM jobs WHERE name = ?"
)
_SQL_APPEND = "INSERT INTO events (job_id, seq, at, kind, data) VALUES (?, ?, ?, ?, ?)"
_SQL_CREATE_JOB = "INSERT INTO jobs (name, created_at) VALUES (?, ?)"
_SQL_JOB_ID = "SELECT id FROM jobs WHERE name = ?"
_SQL_EVENTS = "SELECT seq, at, kind, data FROM events WHERE job_id = ? ORDER BY seq"
_SQL_EVENTS_AFTER = "SELECT seq, at, kind, data FROM events WHERE job_id = ? AND seq > ? ORDER BY seq"
_SQL_JOB_NAMES = "SELECT name FROM jobs ORDER BY id"
# Each named job's last seq, each max(seq) found at the end of its job's range of the events' primary key;
# the names as parameters, at most _NAMES_AT_ONCE a statement (older SQLite builds allow 999).
_SQL_LAST_SEQS = (
    "SELECT j.name, (SELECT max(e.seq) FROM events e WHERE e.job_id = j.id) FROM jobs j "
    "WHERE j.name IN ({marks})"
)
_NAMES_AT_ONCE = 500
# Many jobs' records at once (read_many): their events by job then seq, and the seq each one's summary counts
# (what _require_whole checks), in one snapshot; the names as parameters, at most _NAMES_AT_ONCE a statement.
_SQL_EVENTS_OF_NAMES = (
    "SELECT j.name, e.seq, e.at, e.kind, e.data FROM jobs j JOIN events e ON e.job_id = j.id "
    "WHERE j.name IN ({marks}) ORDER BY j.id, e.seq"
)
_SQL_SUMMARY_SEQS_OF_NAMES = (
    "SELECT j.name, s.seq FROM jobs j JOIN summaries s ON s.job_id = j.id WHERE j.name IN ({marks})"
)
# A record's snapshot (domain/model/jobs/snapshot.py), and what vouches for the events it covers: all
# there, each a JSON object (json_type raises on a text that is not JSON at all), read in C, no row
# handed to Python.
_SQL_SNAPSHOT = "SELECT seq, data FROM snapshots WHERE job_id = ?"
_SQL_COVERED = (
    "SELECT count(*), coalesce(sum(json_type(data) = 'object'), 0) FROM events WHERE job_id = ? AND seq <= ?"
)
_SQL_PUT_SNAPSHOT = (
    "INSERT INTO snapshots (job_id, seq, data) VALUES (?, ?, ?) "
    "ON CONFLICT (job_id) DO UPDATE SET seq = excluded.seq, data = excluded.data"
)
_SQL_DROP_SNAPSHOTS = "DELETE FROM snapshots"
# Changes whenever any other connection (this store's own writer too) commits to the database.
_SQL_DATA_VERSION = "PRAGMA data_version"
# The summary of a job, rewritten in the transaction of each of its appends (adapters/store/summary_rows.py).
_SUMMARY_COLUMNS = ", ".join(COLUMNS)
_SQL_PUT_SUMMARY = (
    f"INSERT INTO summaries (job_id, {_SUMMARY_COLUMNS}) VALUES (?, {', '.join('?' * len(COLUMNS))}) "
    f"ON CONFLICT (job_id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in COLUMNS)}"
)
_SQL_SUMMARY = f"SELECT j.name, s.{', s.'.join(COLUMNS)} FROM summaries s JOIN jobs j ON j.id = s.job_id"
_SQL_SUMMARY_WITH_ID = _SQL_SUMMARY.replace("SELECT j.name", "SELECT s.job_id, j.name", 1)
_SQL_SUMMARY_SEQ = "SELECT seq FROM summaries WHERE job_id = ?"
_SQL_SUMMARY_OF_ID = f"{_SQL_SUMMARY} WHERE s.job_id = ?"
_SQL_JOBS_NEWEST_FIRST = "SELECT id, name FROM jobs WHERE id < ? ORDER BY id DESC"
# what the Unattended notice names of each job not settled: its name, state and sweep, no whole summary
_SQL_UNSETTLED_NAMES = ("SELECT j.name, s.state, s.sweep FROM summaries s JOIN jobs j ON j.id = s.job_id "
                        "WHERE s.settled = 0 AND s.problem IS NULL ORDER BY s.job_id")
# From this many jobs asked at once, the locks folder is listed once and only the lock files in it are
# probed: a job never supervised has none (the notice of a 1,000-element sweep nobody supervised is 1,000
# failed opens otherwise); below it, each lock file is probed, whatever the folder holds.
_LIST_LOCKS_FROM = 32


_NEVER_LOCKED = LoopHealth(held=False, last_loop=None, next_loop=None)  # a job whose lock file was never made


class SqliteStore:
    def __init__(self, root: RecordRoot, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
                 snapshot_every: int = snapshot.EVERY, recorded_in: Callable[[str], Sequence[str]] | None = None,
                 unlocked: str | None = None) -> None:
        """``unlocked``: why nothing can be written in the root now ("full", "read-only"): the store is then
        read without a lock, through a reader that writes nothing (engine.connect_unlocked), and every
        write and every job's lock is refused saying why."""
        self.root = root
        self.db_path = root.path / DB_FILE
        self._busy_timeout_ms = busy_timeout_ms
        self.read_unlocked = unlocked
        schema_lock = FlockLock(root.path / SCHEMA_LOCK)
        if unlocked is None:
            self._locks, created = self._make_room(recorded_in, schema_lock)
            # Writers queue on an flock before BEGIN IMMEDIATE. SQLite's own busy handler sleeps up to 100 ms
            # between tries and is not fair: fifty writers at once starved some past busy_timeout. Polling the
            # flock every few milliseconds keeps every writer's wait short and bounded by the same timeout.
            self._turn_fd = _open_private(root.path / WRITE_LOCK)
        else:
            if not os.path.lexists(self.db_path):
                raise StoreError(f"record store {self.db_path} cannot be made now: {no_room_said(unlocked)}")
            self._locks, created, self._turn_fd = root.path / LOCKS_DIR, False, -1
        self._thread_turn = threading.Lock()
        # Two connections: a reader never queues behind this process's writer waiting for its turn. Each
        # is used by one thread at a time (its lock); the writer is opened on the first write, so a
        # read-only command opens one connection.
        self._read_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._files_seen: tuple[int, ...] | None = None  # read without a lock: the files as the reader found them
        # the last job's event rows read, with the database's version then (PRAGMA data_version)
        self._read_rows: tuple[int, JobId, list[Any]] | None = None
        self._writer: sqlite3.Connection | None = None
        self._integrity_checked = created  # a store this call made is whole; any other is checked before a write
        self._carries = Carries(snapshot_every)
        self._batch_depth = 0  # inside batch(): appends share one transaction
        # one watch of the database's files for every job this process watches (a sweep's elements)
        self._watches = SharedAppendWatches(
            lambda wake: watch_database(root.path, DB_FILE, root.path / WRITE_LOCK, wake))
        try:
            if unlocked is not None:
                with self._errors(), self._read_lock:
                    require_head(self._read_connection(), self.db_path, no_room_said(unlocked))
            else:
                if not created:
                    check_existing(self.db_path, schema_lock)
                with self._errors(), self._read_lock:
                    ensure_schema(self._read_connection(), self.db_path, root.path / SCHEMA_LOCK,
                                  busy_timeout_ms=busy_timeout_ms, created=created)
                if created:  # its schema is committed: no longer a creation a kill could cut short
                    created_whole(self.db_path)
        except BaseException:
            self.close()
            raise
        finally:
            if created:
                schema_lock.release()

    def _make_room(self, recorded_in: Callable[[str], Sequence[str]] | None,
                   schema_lock: FlockLock) -> tuple[Path, bool]:
        """The locks' folder, and whether this call created the store file (its schema lock then held)."""
        if recorded_in is not None and not os.path.lexists(self.db_path):
            jobs = recorded_in(str(self.root.path))  # asked only when there is no store yet: a first use, or a loss
            if jobs:
                raise StoreMissing(str(self.db_path), jobs)
        try:
            locks = ensure_private_dir(self.root.path / LOCKS_DIR)
        except UnsafeDirectory as exc:
            raise StoreError(f"record root {self.root.path}: {exc}") from None
        finish_interrupted_creation(self.db_path, schema_lock)
        return locks, create_exclusively(self.db_path, schema_lock)

    @classmethod
    def open(cls, root: Path, host: HostInfo, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
             snapshot_every: int = snapshot.EVERY, recorded_in: Callable[[str], Sequence[str]] | None = None,
             unlocked_reads: bool = False) -> SqliteStore:
        """Check ``root`` (local, private, this host's; RecordRootRefused if not) and open its store.
        ``snapshot_every``: how often a record's fold is kept (snapshot.EVERY; tests ask for less).
        ``recorded_in``: the jobs said to be recorded in a root (its path), asked before a store is made
        where none is; StoreMissing, and nothing made, when it names any.
        ``unlocked_reads``: on a root that is full or read-only, the store is read without a lock rather
        than refused (``read_unlocked`` then says why; every write is refused): reads work where a user
        most needs them, and nothing is written there (docs/record-backing.md)."""
        record_root = open_record_root(root, host)
        why = no_room(record_root.path) if unlocked_reads else None
        if why is None:
            try:
                return cls(record_root, busy_timeout_ms=busy_timeout_ms, snapshot_every=snapshot_every,
                           recorded_in=recorded_in)
            except StoreError:
                why = no_room(record_root.path) if unlocked_reads else None
                if why is None:
                    raise
        return cls(record_root, busy_timeout_ms=busy_timeout_ms, snapshot_every=snapshot_every, unlocked=why)

    def close(self) -> None:
        for name in ("_reader", "_writer"):
            conn = getattr(self, name, None)
            if conn is not None:
                setattr(self, name, None)
                with suppress(sqlite3.Error):
                    conn.close()
        if self._turn_fd >= 0:
            fd, self._turn_fd = self._turn_fd, -1
            os.close(fd)

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the record -------------------------------------------------------------------------------

    def create(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> None:
        when, encoded = encode_time(at), encode_data(data)
        try:
            with self._errors(), self._writing(job) as db:
                job_id = db.execute(_SQL_CREATE_JOB, (job, when)).lastrowid
                db.execute(_SQL_APPEND, (job_id, 1, when, kind, encoded))
                db.execute(_SQL_PUT_SUMMARY, (job_id, *to_row(self._carries.start(job, at, kind, encoded))))
        except _Exists:
            raise JobExists(f"job {job} is already recorded") from None

    def append(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> int:
        when, encoded = encode_time(at), encode_data(data)
        with self._errors(), self._writing(job) as db:
            return self._add(db, [(job, at, when, kind, encoded)])[0]

    def append_many(self, appends: Sequence[Append]) -> list[int]:
        return append_all(self._carries, appends, self._add_all)

    def _add_all(self, lines: Sequence[Line], _jobs: Sequence[JobId]) -> list[int]:
        with self._errors(), self._writing() as db:  # one BEGIN IMMEDIATE ... COMMIT: one sync for all
            return self._add(db, lines)

    def _add(self, db: sqlite3.Connection, lines: Sequence[Line]) -> list[int]:
        """Each event appended in the transaction at hand, in order; each job's summary (and snapshot, when one
        is due) written once, as its last event of these leaves it: one row per job, not one per event."""
        written = Written(self._carries)
        for job, at, when, kind, encoded in lines:
            known = written.last.get(job)
            if known is None:
                found = db.execute(_SQL_JOB_AND_LAST_SEQ, (job,)).fetchone()
                if found is None:
                    raise UnknownJob(f"no job named {job} is recorded")
                known = (int(found[0]), int(found[1] or 0))
            job_id, seq = known[0], known[1] + 1
            # the events are written as they come: a carry that must catch up reads them (_Rows)
            written.step(job, job_id, seq, at, kind, encoded, _Rows(db, job_id))
            db.execute(_SQL_APPEND, (job_id, seq, when, kind, encoded))
        db.executemany(_SQL_PUT_SUMMARY, written.summary_rows())
        snapshots = written.snapshot_rows()
        if snapshots:
            db.executemany(_SQL_PUT_SNAPSHOT, snapshots)
        return written.seqs

    def read(self, job: JobId) -> JobRecord:
        # Nothing committed since this job's rows were last read (by any connection, this process's writer
        # included): they are still its rows. A supervisor reads its job every loop, mostly unchanged; the
        # version is asked on its own (autocommit), no snapshot opened around it. The rows are decoded
        # anew each time: what a caller does to what it read never reaches the store.
        with self._errors(), self._read_lock:
            version = self._read_connection().execute(_SQL_DATA_VERSION).fetchone()[0]
            kept = self._read_rows
            rows = kept[2] if kept is not None and kept[:2] == (version, job) else None
        if rows is None:
            rows = self._read_events(job)
            with self._read_lock:
                self._read_rows = (version, job, rows)  # one job's only: a walk over every job keeps nothing
        return JobRecord(job=job, events=checked_lines(job, rows, 0, self.db_path))

    def read_many(self, jobs: Sequence[JobId]) -> dict[JobId, JobRecord]:
        names = list(dict.fromkeys(jobs))
        if not names:
            return {}
        try:
            rows_of, covered = self._rows_of_many(names)
        except _ManyDamaged:  # a damaged page among them: each read alone, so the damage is its own job's only
            return self._each_that_reads(names)
        records: dict[JobId, JobRecord] = {}
        for name in names:
            rows = rows_of.get(name)
            last = int(rows[-1][0]) if rows else 0
            if rows is None or (isinstance(covered.get(name), int) and covered[name] > last):
                continue  # not recorded, or its last events do not read (read says which)
            try:
                records[name] = JobRecord(job=name, events=checked_lines(name, rows, 0, self.db_path))
            except RecordDamaged:
                continue
        return records

    def _rows_of_many(self, names: list[JobId]) -> tuple[dict[JobId, list[Any]], dict[str, Any]]:
        """Each named job's event rows (seq, at, kind, data) and its summary's seq, in one snapshot."""
        rows_of: dict[JobId, list[Any]] = {}
        covered: dict[str, Any] = {}
        with self._errors(), self._reading() as conn:
            try:
                for at in range(0, len(names), _NAMES_AT_ONCE):
                    some = names[at:at + _NAMES_AT_ONCE]
                    marks = ", ".join("?" * len(some))
                    for name, seq, when, kind, data in conn.execute(_SQL_EVENTS_OF_NAMES.format(marks=marks), some):
                        rows_of.setdefault(JobId(name), []).append((seq, when, kind, data))
                    with suppress(sqlite3.DatabaseError):  # a damaged summary: read does not check against it
                        covered.update(conn.execute(_SQL_SUMMARY_SEQS_OF_NAMES.format(marks=marks), some).fetchall())
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc):
                    raise
                raise _ManyDamaged() from None
            except UnicodeDecodeError:
                raise _ManyDamaged() from None
        return rows_of, covered

    def _each_that_reads(self, names: list[JobId]) -> dict[JobId, JobRecord]:
        records: dict[JobId, JobRecord] = {}
        for name in names:
            with suppress(UnknownJob, RecordDamaged):
                records[name] = self.read(name)
        return records

    def read_tail(self, job: JobId) -> RecordTail:
        with self._errors(), self._reading() as conn:
            job_id = self._job_id(conn, job)
            kept = self._vouched_snapshot(conn, job_id)
            after = kept[0] if kept is not None else 0
            rows = self._event_rows(conn, job, job_id, after)
        lines = checked_lines(job, rows, after, self.db_path)
        return RecordTail(job, kept[1] if kept is not None else None, after, lines)

    def _vouched_snapshot(self, conn: sqlite3.Connection, job_id: int) -> tuple[int, dict[str, Any]] | None:
        """The job's snapshot, if the events it covers are all there and each still a JSON object (a
        damaged page, a missing row, a text that is no longer JSON: no snapshot, and the whole record is
        read, which says where). Anything that does not read here only costs the snapshot."""
        try:
            kept = snapshot_of(conn.execute(_SQL_SNAPSHOT, (job_id,)).fetchone())
            if kept is None:
                return None
            count, objects = conn.execute(_SQL_COVERED, (job_id, kept[0])).fetchone()
        except (sqlite3.DatabaseError, UnicodeDecodeError):  # malformed JSON in an event, too
            return None
        return kept if count == objects == kept[0] else None


    def _read_events(self, job: JobId) -> list[Any]:
        with self._errors(), self._reading() as conn:
            return self._event_rows(conn, job, self._job_id(conn, job), 0)

    def _event_rows(self, conn: sqlite3.Connection, job: JobId, job_id: int, after: int) -> list[Any]:
        try:
            rows: list[Any] = conn.execute(_SQL_EVENTS_AFTER, (job_id, after)).fetchall()
        except sqlite3.DatabaseError as exc:  # a damaged page under this job's events: its damage only
            if not _is_damage(exc):
                raise
            raise RecordDamaged(job, f"{str(exc).splitlines()[0]} in {self.db_path}") from None
        except UnicodeDecodeError:  # a damaged byte inside one of its events' text
            raise RecordDamaged(job, f"an event holds text that is not UTF-8 (in {self.db_path})") from None
        # (sqlite3 says "Could not decode to UTF-8 column ..." as an OperationalError: damage, above)
        self._require_whole(conn, job, job_id, int(rows[-1][0]) if rows else after)
        return rows

    def _require_whole(self, conn: sqlite3.Connection, job: JobId, job_id: int, last: int) -> None:
        """A damaged page can lose a record's last events without any error from SQLite (a leaf whose cell
        count was hit reads as fewer rows): the record would then fold to an earlier state (a succeeded job
        shown held, and Unattended). Its summary, written in the transaction of each append, names its last
        event: a record that ends before it is damaged, and said so (read in the same snapshot)."""
        try:
            found = conn.execute(_SQL_SUMMARY_SEQ, (job_id,)).fetchone()
        except sqlite3.DatabaseError:
            return  # a damaged summary: list folds the record instead (summaries), and doctor says so
        covered = found[0] if found is not None else None
        if isinstance(covered, int) and covered > last:
            raise RecordDamaged(job, f"its record ends at event {last} but its summary counts {covered} events: "
                                     f"the rest do not read (a damaged page in {self.db_path})", last + 1)

    def jobs(self) -> list[JobId]:
        with self._errors(), self._reading() as conn:
            return [JobId(name) for (name,) in conn.execute(_SQL_JOB_NAMES).fetchall()]

    def last_seqs(self, jobs: Sequence[JobId]) -> dict[JobId, int]:
        if not jobs:
            return {}
        names = list(dict.fromkeys(jobs))
        rows = []
        with self._errors(), self._reading() as conn:  # one snapshot; at most _NAMES_AT_ONCE parameters each
            for at in range(0, len(names), _NAMES_AT_ONCE):
                some = names[at:at + _NAMES_AT_ONCE]
                rows += conn.execute(_SQL_LAST_SEQS.format(marks=", ".join("?" * len(some))), some).fetchall()
        return {JobId(name): int(seq) for name, seq in rows if seq is not None}

    # --- the summaries --------------------------------------------------------------------------

    def summary(self, job: JobId) -> JobSummary:
        with self._errors(), self._reading() as conn:
            found = conn.execute(_SQL_JOB_ID, (job,)).fetchone()
            if found is None:
                raise UnknownJob(f"no job named {job} is recorded")
            return self._summary_of(conn, int(found[0]), job)

    def summaries(self, query: SummaryQuery) -> Iterator[JobSummary]:
        sql, args = newest_first(_SQL_SUMMARY_WITH_ID, query, "?")
        # One snapshot, read a page at a time (memory stays flat in the number of jobs), on a connection
        # of its own: the caller may use the store between two rows.
        with self._errors():
            conn = self._new_reader()
        below: int | None = None  # the last job given: a damaged table is read on from there
        given = 0
        try:
            with self._errors():
                try:
                    conn.execute("BEGIN")
                    cursor = conn.execute(sql, args)
                    while rows := cursor.fetchmany(256):
                        for row in rows:
                            summary = self._summary(row[1:])
                            below, given = int(row[0]), given + 1
                            yield summary
                    return
                except (sqlite3.DatabaseError, UnicodeDecodeError, _SummaryDamaged) as exc:
                    if isinstance(exc, sqlite3.DatabaseError) and not _is_damage(exc):
                        raise
                yield from self._job_by_job(conn, query, below, given)
        finally:
            conn.close()

    def count(self, query: SummaryQuery) -> int:
        clause, args = where(query, "?")
        with self._errors(), self._reading() as conn:
            try:
                return int(conn.execute(f"SELECT count(*) FROM summaries s{clause}", args).fetchone()[0])
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc):
                    raise
            return sum(1 for _ in self._job_by_job(conn, replace(query, limit=None), None, 0))

    def unsettled(self) -> list[JobSummary]:
        with self._errors(), self._reading() as conn:
            try:
                rows = conn.execute(f"{_SQL_SUMMARY} WHERE s.settled = 0 AND s.problem IS NULL ORDER BY s.job_id"
                                    ).fetchall()
                return [self._summary(row) for row in rows]
            except (sqlite3.DatabaseError, UnicodeDecodeError, _SummaryDamaged) as exc:
                if isinstance(exc, sqlite3.DatabaseError) and not _is_damage(exc):
                    raise
            every = self._job_by_job(conn, SummaryQuery(include_pruned=True), None, 0)
            return [s for s in reversed(list(every)) if not s.settled and s.problem is None]

    def _job_by_job(self, conn: sqlite3.Connection, query: SummaryQuery, below: int | None,
                    given: int) -> Iterator[JobSummary]:
        """The summaries table does not read whole (a damaged page): each job's row alone, or its summary
        folded from its events, or why its record does not read. Only a damaged jobs table stops it."""
        if conn.in_transaction:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        conn.execute("BEGIN")
        jobs = conn.execute(_SQL_JOBS_NEWEST_FIRST, (below if below is not None else 2**62,)).fetchall()
        for job_id, name in jobs:
            if query.limit is not None and given >= query.limit:
                return
            summary = self._summary_of(conn, int(job_id), JobId(name))
            if query.matches(summary):
                given += 1
                yield summary

    def _summary_of(self, conn: sqlite3.Connection, job_id: int, job: JobId) -> JobSummary:
        """The job's summary row; if it does not read, folded again from the events (the truth)."""
        try:
            row = conn.execute(_SQL_SUMMARY_OF_ID, (job_id,)).fetchone()
            if row is not None:
                return self._summary(row)
        except (sqlite3.DatabaseError, UnicodeDecodeError, _SummaryDamaged) as exc:
            if isinstance(exc, sqlite3.DatabaseError) and not _is_damage(exc):
                raise
        try:
            events = conn.execute(_SQL_EVENTS, (job_id,)).fetchall()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            if isinstance(exc, sqlite3.DatabaseError) and not _is_damage(exc):
                raise
            detail = str(exc).splitlines()[0] if isinstance(exc, sqlite3.DatabaseError) else "text that is not UTF-8"
            return unreadable(job, 0, EPOCH, EPOCH, f"damaged: {detail} in {self.db_path}")
        return carry_of(job, events).summary()

    def unattended(self) -> list[JobSummary]:
        unsettled = self.unsettled()
        present = self._lock_files(len(unsettled))  # each lock's own probe (those in the folder, for many)
        return unattended_among(unsettled, lambda name: self._held(name, present))

    def unattended_names(self) -> list[UnattendedJob]:
        """The narrow query (name, state, sweep) and the locks probed as ``healths`` probes them; a summaries
        table that does not read whole is read as ``unattended`` reads it, job by job."""
        with self._errors(), self._reading() as conn:
            try:
                rows = conn.execute(_SQL_UNSETTLED_NAMES).fetchall()
                unsettled = [UnattendedJob(JobId(name), state, JobId(sweep) if sweep is not None else None)
                             for name, state, sweep in rows]
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                if isinstance(exc, sqlite3.DatabaseError) and not _is_damage(exc):
                    raise
                unsettled = None
        if unsettled is None:
            return [UnattendedJob(s.job, s.state, s.sweep) for s in self.unattended()]
        present = self._lock_files(len(unsettled))
        return unattended_among(unsettled, lambda name: self._held(name, present))

    def rebuild_summaries(self) -> int:
        """Every summary folded again from its record's events, in one transaction; how many."""
        with self._errors(), self._writing() as db:
            summaries, snapshots = self._carries.rebuilt(db.execute(SQL_EVERY_EVENT))
            db.executemany(_SQL_PUT_SUMMARY, summaries)
            db.execute(_SQL_DROP_SNAPSHOTS)
            db.executemany(_SQL_PUT_SNAPSHOT, snapshots)
            self._carries.clear()
        return len(summaries)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every create and append inside is one transaction, committed (durably) on leaving: for tools
        that build large stores. A failure inside rolls them all back."""
        with self._writing(), self._carries.all_kept():
            self._batch_depth += 1
            try:
                yield
            finally:
                self._batch_depth -= 1

    @staticmethod
    def _summary(row: tuple[Any, ...]) -> JobSummary:
        try:
            return from_row(row[0], row[1:])
        except (ValueError, TypeError) as exc:
            raise _SummaryDamaged(str(exc)) from None

    def location(self) -> str:
        return str(self.root.path)

    def identity(self) -> StoreIdentity:
        try:
            st = os.stat(self.db_path)
        except OSError as exc:
            raise StoreError(f"record store {self.db_path} cannot be used: {exc.strerror or exc}") from None
        return StoreIdentity(
            backend="sqlite", location=str(self.db_path), host=self.root.host, device=st.st_dev, inode=st.st_ino
        )

    # --- the lock ---------------------------------------------------------------------------------

    @contextmanager
    def lock(self, job: JobId) -> Iterator[FlockJobLock]:
        self._refuse_unlocked(f"the lock of job {job} cannot be taken now")
        flock = FlockLock(self._lock_path(job))
        for pause in (*_LOCK_RETRIES, None):
            try:
                flock.acquire()
                break
            except LockHeld:
                if pause is None:
                    raise LockBusy(f"job {job} is locked by another actor (a live supervisor or command)") from None
                time.sleep(pause)
            except OSError as exc:
                raise StoreError(f"lock of job {job} cannot be taken: {exc.strerror or exc}") from None
        held = FlockJobLock(flock, job)
        try:
            yield held
        finally:
            held.release()

    def lock_many(self, jobs: Sequence[JobId]) -> dict[JobId, Held[FlockJobLock]]:
        return each_in_turn(self.lock, jobs)  # no round trip to save: each taken in turn

    def locking(self) -> AbstractContextManager[None]:
        return nullcontext()  # each lock is a name in a table (memory) or its own file (SQLite): nothing to keep

    def health(self, job: JobId) -> LoopHealth:
        path = self._lock_path(job)
        try:
            held = is_held(path)
        except OSError:
            held = False  # display only: an unreadable lock file shows as not held
        last, next_at = read_beat(path)
        return LoopHealth(held=held, last_loop=last, next_loop=next_at)

    def healths(self, jobs: Sequence[JobId]) -> dict[JobId, LoopHealth]:
        # each a probe of its own lock file, and only of those in the folder when many are asked
        present = self._lock_files(len(jobs))
        return {job: self.health(job) if present is None or lock_file_name(job) in present else _NEVER_LOCKED
                for job in jobs}

    def _lock_files(self, asked: int) -> frozenset[str] | None:
        """The locks folder's file names, for ``asked`` jobs probed at once: a job whose lock file is not
        there has never been locked (not held, no beat: what its probe would say). None: probe each."""
        if asked < _LIST_LOCKS_FROM:
            return None
        try:
            return frozenset(os.listdir(self._locks))
        except OSError:
            return None  # display only: each lock file is probed then, as for a few

    def _held(self, job: JobId, present: frozenset[str] | None) -> bool:
        name = lock_file_name(job)
        if present is not None and name not in present:
            return False
        try:
            return is_held(self._locks / name)
        except OSError:
            return False  # display only: an unreadable lock file shows as not held

    def watch_appends(self, job: JobId, wake: Callable[[], None]) -> Subscription | None:
        return self._watches.subscribe(wake)  # any job's commit wakes it: see append_watch.py

    def follow_appends(self, job: JobId, wake: Callable[[], None]) -> Subscription | None:
        # the same watch: it sees every writer's commit, the holder's too, and takes no lock of the job's
        return self.watch_appends(job, wake)

    # --- helpers ----------------------------------------------------------------------------------

    def _lock_path(self, job: JobId) -> Path:
        return self._locks / lock_file_name(job)

    def _read_connection(self) -> sqlite3.Connection:
        if self._reader is not None and self.read_unlocked is not None and self._files_seen != files_now(self.db_path):
            # a writer came back (room again): a reader that took the file as immutable must not go on
            # reading it as it changes; a new one reads it as it is now (through the writer's -shm)
            reader, self._reader, self._read_rows = self._reader, None, None
            with suppress(sqlite3.Error):
                reader.close()
        if self._reader is None:
            self._reader = self._new_reader()
        return self._reader

    def _new_reader(self) -> sqlite3.Connection:
        if self.read_unlocked is not None:
            self._files_seen = files_now(self.db_path)
            return connect_unlocked(self.db_path, busy_timeout_ms=self._busy_timeout_ms)
        return connect(self.db_path, busy_timeout_ms=self._busy_timeout_ms)

    def _refuse_unlocked(self, what: str) -> None:
        if self.read_unlocked is not None:
            raise StoreError(f"{what}: {no_room_said(self.read_unlocked)}; nothing was written to record store "
                             f"{self.db_path}")

    @contextmanager
    def _writing(self, job: JobId | None = None) -> Iterator[sqlite3.Connection]:
        """This process's turn (a thread lock, then the flock), then BEGIN IMMEDIATE ... COMMIT (synced).
        Inside ``batch()`` the batch's transaction is used; a failure then rolls the whole batch back."""
        if self._batch_depth:
            assert self._writer is not None
            try:
                yield self._writer
            except BaseException:
                self._carries.clear()
                raise
            return
        try:
            with self._committing() as db:
                yield db
        except BaseException:
            if job is not None:
                self._carries.forget(job)
            raise

    @contextmanager
    def _committing(self) -> Iterator[sqlite3.Connection]:
        self._refuse_unlocked("nothing can be recorded now")
        if not self._integrity_checked:
            self._check_integrity()
        with self._thread_turn:
            self._take_turn()
            try:
                if self._writer is None:
                    self._writer = connect(self.db_path, busy_timeout_ms=self._busy_timeout_ms)
                db = self._writer
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                    db.execute("COMMIT")  # synchronous=FULL: the WAL frame is synced before this returns
                except BaseException:
                    if db.in_transaction:
                        with suppress(sqlite3.Error):
                            db.execute("ROLLBACK")
                    raise
            finally:
                fcntl.flock(self._turn_fd, fcntl.LOCK_UN)

    def integrity_problem(self) -> str | None:
        """SQLite's quick_check of every page, as one line with what to do; None when it passes (and then a
        first write does not check again). For ``doctor``, and for a command to ask before its side effects."""
        try:
            self._check_integrity()
        except StoreRefused as exc:
            return str(exc)
        return None

    def _check_integrity(self) -> None:
        """Before this process's first write: a store with a damaged page takes no more (it could spread)."""
        with self._errors(), self._reading() as conn:
            problem = quick_check(conn)
        if problem is not None:
            raise StoreRefused(self.db_path, f"fails its integrity check (quick_check: {problem})")
        self._integrity_checked = True

    def _take_turn(self) -> None:
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        pause = 0.0005
        while True:
            try:
                fcntl.flock(self._turn_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
            if time.monotonic() >= deadline:
                raise StoreError(
                    f"record store {self.db_path} stayed locked by another process for longer than busy_timeout "
                    f"({self._busy_timeout_ms} ms); nothing was written"
                )
            time.sleep(pause)
            pause = min(pause * 2, _TURN_POLL_MAX)

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        # A deferred BEGIN: a reader sees one snapshot and never queues behind writers (WAL).
        with self._read_lock:
            db = self._read_connection()
            db.execute("BEGIN")
            try:
                yield db
            finally:
                if db.in_transaction:
                    with suppress(sqlite3.Error):
                        db.execute("ROLLBACK")  # nothing was written: ending the snapshot is all

    @staticmethod
    def _job_id(conn: sqlite3.Connection, job: JobId) -> int:
        found = conn.execute(_SQL_JOB_ID, (job,)).fetchone()
        if found is None:
            raise UnknownJob(f"no job named {job} is recorded")
        return int(found[0])

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn what SQLite says into one StoreError line naming the store; never a traceback."""
        try:
            yield
        except sqlite3.IntegrityError as exc:
            if "UNIQUE constraint failed: jobs.name" in str(exc):
                raise _Exists() from None
            raise StoreError(f"record store {self.db_path} refused a write: {exc}") from None
        except sqlite3.Error as exc:
            raise StoreError(describe_sqlite_error(self.db_path, exc, self._busy_timeout_ms)) from None
        except UnicodeError:  # sqlite3 decodes TEXT as UTF-8: a damaged byte in a job's name or an event
            raise StoreError(f"record store {self.db_path} is damaged (text that is not UTF-8); "
                             f"{recovery_advice(self.db_path)}") from None
        except OSError as exc:
            raise StoreError(f"record store {self.db_path} cannot be used: {exc.strerror or exc}") from None


class _Exists(Exception):
    pass


class _ManyDamaged(Exception):
    """A damaged page (or text that is not UTF-8) under one of the jobs ``read_many`` asked for."""


class _SummaryDamaged(Exception):
    """A summary row whose columns do not read: it is folded again from the record."""


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc)
    return "malformed" in text or "corrupt" in text or "not a database" in text or "decode" in text


def _open_private(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise StoreError(f"record store lock {path} cannot be opened: {exc.strerror or exc}") from None


class _Rows:
    """What an append whose carry is not current reads, in its transaction (summary_rows.RecordRows)."""

    def __init__(self, db: sqlite3.Connection, job_id: int) -> None:
        self._db, self._job_id = db, job_id

    def snapshot(self) -> Any:
        return self._db.execute(_SQL_SNAPSHOT, (self._job_id,)).fetchone()

    def after(self, seq: int) -> list[Any]:
        return self._db.execute(_SQL_EVENTS_AFTER, (self._job_id, seq)).fetchall()
