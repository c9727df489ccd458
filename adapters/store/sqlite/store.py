"""SqliteStore: a job's record as rows in one SQLite file of the record root; its lock, an flock beside it."""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters.durable.lock import FlockLock, LockHeld, is_held
from adapters.durable.private_dir import UnsafeDirectory, ensure_private_dir
from adapters.store.event_codec import decode_data, decode_time, encode_data, encode_time
from adapters.store.record_root import RecordRoot, open_record_root
from adapters.store.sqlite.engine import connect, describe_sqlite_error
from adapters.store.sqlite.locks import FlockJobLock, lock_file_name, read_beat
from adapters.store.sqlite.opening import (
    StoreRefused,
    check_existing,
    create_exclusively,
    quick_check,
    recovery_advice,
)
from adapters.store.sqlite.schema import ensure_schema
from domain.model.jobs.ids import JobId
from domain.model.jobs.record import EventLine, JobRecord, LoopHealth, StoreIdentity
from ports.host import HostInfo
from ports.job_store import JobExists, LockBusy, RecordDamaged, StoreError, UnknownJob

DB_FILE = "records.db"
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
_SQL_JOB_NAMES = "SELECT name FROM jobs ORDER BY id"


class SqliteStore:
    def __init__(self, root: RecordRoot, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> None:
        self.root = root
        self.db_path = root.path / DB_FILE
        self._busy_timeout_ms = busy_timeout_ms
        try:
            self._locks = ensure_private_dir(root.path / LOCKS_DIR)
        except UnsafeDirectory as exc:
            raise StoreError(f"record root {root.path}: {exc}") from None
        schema_lock = FlockLock(root.path / SCHEMA_LOCK)
        created = create_exclusively(self.db_path, schema_lock)
        # Writers queue on an flock before BEGIN IMMEDIATE. SQLite's own busy handler sleeps up to 100 ms
        # between tries and is not fair: fifty writers at once starved some past busy_timeout. Polling
        # the flock every few milliseconds keeps every writer's wait short and bounded by the same timeout.
        self._turn_fd = _open_private(root.path / WRITE_LOCK)
        self._thread_turn = threading.Lock()
        # Two connections: a reader never queues behind this process's writer waiting for its turn. Each
        # is used by one thread at a time (its lock); the writer is opened on the first write, so a
        # read-only command opens one connection.
        self._read_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._writer: sqlite3.Connection | None = None
        self._integrity_checked = created  # a store this call made is whole; any other is checked before a write
        try:
            if not created:
                check_existing(self.db_path, schema_lock)
            with self._errors(), self._read_lock:
                ensure_schema(self._read_connection(), self.db_path, root.path / SCHEMA_LOCK,
                              busy_timeout_ms=busy_timeout_ms, created=created)
        except BaseException:
            self.close()
            raise
        finally:
            if created:
                schema_lock.release()

    @classmethod
    def open(cls, root: Path, host: HostInfo, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> SqliteStore:
        """Check ``root`` (local, private, this host's; RecordRootRefused if not) and open its store."""
        return cls(open_record_root(root, host), busy_timeout_ms=busy_timeout_ms)

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
            with self._errors(), self._writing() as db:
                job_id = db.execute(_SQL_CREATE_JOB, (job, when)).lastrowid
                db.execute(_SQL_APPEND, (job_id, 1, when, kind, encoded))
        except _Exists:
            raise JobExists(f"job {job} is already recorded") from None

    def append(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> int:
        when, encoded = encode_time(at), encode_data(data)
        with self._errors(), self._writing() as db:
            found = db.execute(_SQL_JOB_AND_LAST_SEQ, (job,)).fetchone()
            if found is None:
                raise UnknownJob(f"no job named {job} is recorded")
            seq = int(found[1] or 0) + 1
            db.execute(_SQL_APPEND, (found[0], seq, when, kind, encoded))
        return seq

    def read(self, job: JobId) -> JobRecord:
        with self._errors(), self._reading() as conn:
            job_id = self._job_id(conn, job)
            try:
                rows = conn.execute(_SQL_EVENTS, (job_id,)).fetchall()
            except sqlite3.DatabaseError as exc:  # a damaged page under this job's events: its damage only
                if not _is_damage(exc):
                    raise
                raise RecordDamaged(job, f"{str(exc).splitlines()[0]} in {self.db_path}") from None
            except UnicodeDecodeError:  # a damaged byte inside one of its events' text
                raise RecordDamaged(job, f"an event holds text that is not UTF-8 (in {self.db_path})") from None
            # (sqlite3 says "Could not decode to UTF-8 column ..." as an OperationalError: damage, above)
        events = []
        for expected, (seq, at, kind, data) in enumerate(rows, start=1):
            if seq != expected:
                raise RecordDamaged(job, f"event {expected} is missing from {self.db_path}", expected)
            try:
                if not isinstance(kind, str):
                    raise TypeError(f"its kind is {type(kind).__name__}, not text")
                events.append(EventLine(seq=seq, at=decode_time(at), kind=kind, data=decode_data(data)))
            except (ValueError, TypeError, RecursionError) as exc:
                raise RecordDamaged(job, f"{exc} (in {self.db_path})", seq) from None
        return JobRecord(job=job, events=tuple(events))

    def jobs(self) -> list[JobId]:
        with self._errors(), self._reading() as conn:
            return [JobId(name) for (name,) in conn.execute(_SQL_JOB_NAMES).fetchall()]

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

    def health(self, job: JobId) -> LoopHealth:
        path = self._lock_path(job)
        try:
            held = is_held(path)
        except OSError:
            held = False  # display only: an unreadable lock file shows as not held
        return LoopHealth(held=held, last_loop=read_beat(path))

    # --- helpers ----------------------------------------------------------------------------------

    def _lock_path(self, job: JobId) -> Path:
        return self._locks / lock_file_name(job)

    def _read_connection(self) -> sqlite3.Connection:
        if self._reader is None:
            self._reader = connect(self.db_path, busy_timeout_ms=self._busy_timeout_ms)
        return self._reader

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """This process's turn (a thread lock, then the flock), then BEGIN IMMEDIATE ... COMMIT (synced)."""
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


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc)
    return "malformed" in text or "corrupt" in text or "not a database" in text or "decode" in text


def _open_private(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise StoreError(f"record store lock {path} cannot be opened: {exc.strerror or exc}") from None
