"""Connections whose every commit is durable and whose writers wait their turn.

WAL with synchronous=FULL: a commit is on disk when it returns. busy_timeout lets a writer wait for
another instead of failing. sqlite3's own transaction handling is switched off and every write
transaction starts with BEGIN IMMEDIATE, so the wait happens at BEGIN, where busy_timeout applies
(a deferred BEGIN that later writes gets SQLITE_BUSY at once: cpython#124510).

The store speaks to sqlite3 directly (``connect``): SQLAlchemy costs ~150 ms to import, the larger part
of a ``dunscaith status``, and the store's few statements need none of it. The SQLAlchemy engine
(``make_engine``) is for alembic only: a migration, or the ``alembic`` command line.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Engine

# Execution option a reader sets so its transaction starts deferred and never waits for writers.
READ_ONLY = "dunscaith_read_only"


def apply_pragmas(dbapi_conn: Any, *, busy_timeout_ms: int, foreign_keys: bool = True) -> None:
    """Outside any transaction (so the PRAGMAs take effect), on every new connection."""
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    try:
        # Only a new, empty database takes it: small pages keep each commit's WAL frames (and so its
        # fsync) small, and event lines are small. No effect on an existing database.
        cur.execute("PRAGMA page_size=1024")
        cur.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=FULL")
        # Checkpoint every 100 pages (not 1000): the WAL then starts over within its first 100 KiB
        # and a commit overwrites blocks the file already has, so its fdatasync carries no size or
        # allocation change. Event lines are small; a checkpoint moves a handful of pages.
        cur.execute("PRAGMA wal_autocheckpoint=100")
        cur.execute("PRAGMA journal_size_limit=1048576")
        cur.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
    finally:
        cur.close()


def connect(path: Path, *, busy_timeout_ms: int) -> sqlite3.Connection:
    """A connection of the store. Shared between threads: the store serialises its use."""
    conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False)
    try:
        apply_pragmas(conn, busy_timeout_ms=busy_timeout_ms)
    except BaseException:
        conn.close()
        raise
    return conn


def connect_unlocked(path: Path, *, busy_timeout_ms: int) -> sqlite3.Connection:
    """A reader that takes no lock and writes nothing, for a root that is full or read-only.

    A WAL database read with ``mode=ro`` still needs its -shm (the WAL's index): an existing one, kept by a
    live writer, is used (the newest commits, read as any reader reads them); SQLite would create a
    missing one, and on a full or read-only disk cannot (and on a full one leaves empty -wal and -shm
    files behind). Without one, no connection has the database open to write (a writer needs the -shm
    too), so the file is read as it is (``immutable=1``: no lock, no -shm, nothing created): every
    checkpointed commit. Commits still in a -wal that no -shm indexes (a writer that died) are not read:
    what is shown may then be a moment old, as the notice the read path prints says."""
    uri = path.as_uri()
    shm = path.with_name(path.name + "-shm")
    if shm.is_file() and shm.stat().st_size > 0:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=busy_timeout_ms / 1000, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()  # an index it cannot use (a read-only mount): the file as it is
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None, check_same_thread=False)


def files_now(path: Path) -> tuple[int, ...]:
    """The database's file and its -shm as they are (size, change time): what a reader without a lock
    compares to see a writer come back."""
    found: list[int] = []
    for name in (path.name, path.name + "-shm"):
        try:
            st = path.with_name(name).stat()
            found += [st.st_size, st.st_mtime_ns]
        except OSError:
            found += [-1, -1]
    return tuple(found)


def make_engine(path: Path, *, busy_timeout_ms: int, foreign_keys: bool = True) -> Engine:
    from sqlalchemy import Connection, create_engine, event

    engine = create_engine(f"sqlite:///{path}")

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        apply_pragmas(dbapi_conn, busy_timeout_ms=busy_timeout_ms, foreign_keys=foreign_keys)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        read_only = conn.get_execution_options().get(READ_ONLY, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine


def _advice(db: Path) -> str:
    from dunscaith.adapters.store.sqlite.opening import recovery_advice

    return recovery_advice(db)


def describe_sqlite_error(db: Path, exc: Exception, busy_timeout_ms: int) -> str:
    message = str(getattr(exc, "orig", None) or exc).splitlines()[0]
    if "file is not a database" in message:
        return f"record store {db} is not a SQLite database (damaged, or another program's file); {_advice(db)}"
    if "malformed" in message or "corrupt" in message:
        return f"record store {db} is damaged ({message}); {_advice(db)}"
    if "database is locked" in message or "database is busy" in message:
        return (
            f"record store {db} stayed locked by another process for longer than busy_timeout "
            f"({busy_timeout_ms} ms); nothing was written"
        )
    if "unable to open" in message or "readonly" in message or "disk I/O" in message:
        return f"record store {db} cannot be used: {message}"
    return f"record store {db}: {message}"
