"""An engine whose every connection is durable and waits its turn to write.

WAL with synchronous=FULL: a commit is on disk when it returns. busy_timeout lets a writer wait for
another instead of failing. sqlite3's own transaction handling is switched off and every write
transaction starts with BEGIN IMMEDIATE, so the wait happens at BEGIN, where busy_timeout applies
(a deferred BEGIN that later writes gets SQLITE_BUSY at once: cpython#124510).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event

# Execution option a reader sets so its transaction starts deferred and never waits for writers.
READ_ONLY = "dunscaith_read_only"


def make_engine(path: Path, *, busy_timeout_ms: int, foreign_keys: bool = True) -> Engine:
    engine = create_engine(f"sqlite:///{path}")

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:  # outside any transaction: PRAGMAs take effect
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

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        read_only = conn.get_execution_options().get(READ_ONLY, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine
