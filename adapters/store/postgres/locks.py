"""The per-job lock of the PostgreSQL store: a session advisory lock, on the session the process's locks share.

Sound by the rules measured in ../shared/notes/postgres.md:

- one dedicated connection for the process's locks (``LockSession``), never pooled and never
  reconnected: a lock is its key held by that session, so once the session is gone (server restarted,
  backend terminated, network cut long enough) every lock on it is lost for good, and each says so
  instead of quietly opening a new session; a lock taken later starts a session of its own;
- every record write of a holder goes over that connection (``writing``), inside a transaction whose
  first statement reads the backend pid: a commit that succeeds proves the session, and so each key it
  took and has not given back, was still held;
- ``check`` asks the server, on that connection, right before every external action;
- a changed backend pid means the session is not the one that took the lock (a transaction pooler
  between us and the server): lost.

One session for many locks is what lets one supervisor hold a sweep's hundreds of elements: a connection
per element would exhaust the server's ``max_connections`` (100 by default, shared by every user). Each
element keeps its own key, so every other actor sees each element's lock exactly as it sees a job's.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext, suppress
from datetime import datetime
from typing import Any

import psycopg

from dunscaith.adapters.store.event_codec import encode_time
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import LockLost, StoreError

# Shown in pg_locks as locktype 'advisory', classid = high 32 bits, objid = low 32 bits, objsubid 1.
_SQL_CHECK = (
    "SELECT pg_backend_pid(), EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
    "AND pid = pg_backend_pid() AND classid = %s::bigint::oid AND objid = %s::bigint::oid "
    "AND objsubid = 1 AND granted)"
)
_SQL_BEAT = (
    "INSERT INTO lock_beats (job, last_loop, next_loop) VALUES (%s, %s, %s) "
    "ON CONFLICT (job) DO UPDATE SET last_loop = EXCLUDED.last_loop, next_loop = EXCLUDED.next_loop "
    "RETURNING pg_backend_pid()"
)


LOCK_KEY_PREFIX = b"dunscaith-job\0"  # the server computes the same keys (store.py's _SQL_UNATTENDED)


def lock_key(job: JobId) -> int:
    """A signed 64-bit key for the job's name. Two names that collide only lock each other out."""
    digest = hashlib.sha256(LOCK_KEY_PREFIX + job.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def key_halves(key: int) -> tuple[int, int]:
    unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
    return unsigned >> 32, unsigned & 0xFFFF_FFFF


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.removeprefix("connection failed: ")


class LockSession:
    """The one server session a process's job locks live on, and how many of them it holds now."""

    def __init__(self, conn: psycopg.Connection[Any], pid: int) -> None:
        self.conn = conn
        self.pid = pid
        self.mutex = threading.RLock()  # one statement or transaction at a time, whichever lock it is for
        self.lost = ""  # why the session ended under its locks; nothing is done on it after
        self.holders = 0
        self.kept = False  # kept open while no lock is held (the store's ``locking``)

    def usable(self) -> bool:
        return not self.lost and not self.conn.closed and not self.conn.broken

    def end(self, why: str) -> None:
        """The session is gone (or must not be trusted): every lock on it is lost, none is taken on it again."""
        with self.mutex:
            self.lost = self.lost or why
            with suppress(Exception):
                self.conn.close()  # never used again: a new session would hold none of its keys

    def let_go(self) -> None:
        """One of its locks was released; the last one ends the session (which would free the keys anyway),
        unless it is kept for the next."""
        with self.mutex:
            self.holders -= 1
            if self.holders <= 0 and not self.kept:
                self.end("every lock on it was released")


class PgJobLock:
    def __init__(self, session: LockSession, job: JobId, key: int, on_release: Callable[[JobId], None]) -> None:
        self._session = session
        self._conn = session.conn
        self._job = job
        self._halves = key_halves(key)
        self._key = key
        self.pid = session.pid
        self._on_release = on_release
        self._mutex = session.mutex
        self._held = True
        self._lost = ""

    # --- the port --------------------------------------------------------------------------------

    def check(self) -> None:
        with self._mutex:
            self._usable()
            try:
                row = self._conn.execute(_SQL_CHECK, self._halves).fetchone()
            except psycopg.Error as exc:
                self._lose(f"its session to the server ended ({first_line(exc)})")
            assert row is not None
            if row[0] != self.pid:
                self._lose(f"the server answered from another session (backend {row[0]}, not {self.pid})")
            if not row[1]:
                self._lose("the server no longer shows it held", session=False)

    def beat(self, at: datetime, next_at: datetime | None = None) -> None:
        # ``next_at`` too: a holder woken by the server (watch_appends) sleeps to its next poll, and is not
        # late before then
        line, next_line = encode_time(at), encode_time(next_at) if next_at is not None else None
        with self._mutex:
            if not self._held:
                raise StoreError(f"the lock of job {self._job} was released; its loop cannot beat")
            self._usable()
            try:
                row = self._conn.execute(_SQL_BEAT, (self._job, line, next_line)).fetchone()
            except psycopg.errors.LockNotAvailable:
                raise StoreError(f"the loop's beat of job {self._job} was not recorded: the store's tables are "
                                 "locked by another session (VACUUM FULL, LOCK TABLE, a migration)") from None
            except psycopg.Error as exc:
                if self._conn.broken or self._conn.closed:
                    self._lose(f"its session to the server ended ({first_line(exc)})")
                raise StoreError(f"the loop's beat of job {self._job} was not recorded: {first_line(exc)}") from None
            if row is None or row[0] != self.pid:
                self._lose("the server answered from another session")

    def release(self) -> None:
        with self._mutex:
            if not self._held:
                return
            self._held = False
            try:
                if not self._lost and self._session.usable():
                    try:
                        self._conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,))
                    except psycopg.Error as exc:  # the key may still be held: only the session's end frees it
                        self._session.end(f"giving back the lock of job {self._job} failed ({first_line(exc)})")
            finally:
                self._session.let_go()
                self._on_release(self._job)

    # --- for the store ---------------------------------------------------------------------------

    @contextmanager
    def writing(self, *, pipelined: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """One transaction on the lock's own session; a broken session is a lost lock (LockLost)."""
        with self._mutex:
            self._usable()
            try:
                with self._conn.pipeline() if pipelined else nullcontext(), self._conn.transaction():
                    yield self._conn
            except psycopg.Error as exc:
                if self._conn.broken or self._conn.closed:
                    self._lose(f"its session to the server ended ({first_line(exc)}); the last write may or may "
                               "not have been committed")
                raise

    @staticmethod
    @contextmanager
    def writing_all(locks: Sequence[PgJobLock], *, pipelined: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """One transaction for the holder of every one of ``locks``, on the one session they all live on,
        each proven held and not lost first; refused (StoreError) when they are not all on one session."""
        first = locks[0]
        if any(lock._session is not first._session for lock in locks):
            raise StoreError("one transaction cannot write for locks held on different sessions")
        with first._mutex:  # the session's: no statement of another lock's goes between
            for lock in locks[1:]:
                lock._usable()
            with first.writing(pipelined=pipelined) as conn:
                yield conn

    def verify_pid(self, pid: int) -> None:
        if pid != self.pid:
            self._lose(f"the server answered from another session (backend {pid}, not {self.pid})")

    def _usable(self) -> None:
        if not self._held:
            raise LockLost(f"the lock of job {self._job} was released; nothing more may be done under it")
        if not self._lost and self._session.lost:
            self._lost = (f"the lock of job {self._job} is lost: {self._session.lost}; another actor may hold the "
                          "job now")
        if self._lost:
            raise LockLost(self._lost) from None

    def _lose(self, why: str, *, session: bool = True) -> Any:
        """``session``: the session itself is gone or not to be trusted, so every lock on it is lost too;
        otherwise only this key is (the session still holds the others)."""
        self._lost = f"the lock of job {self._job} is lost: {why}; another actor may hold the job now"
        if session:
            self._session.end(why)
        raise LockLost(self._lost) from None
