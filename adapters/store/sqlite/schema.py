"""Bring a store's schema to this build's head on open, under a lock; refuse one from a newer build.

The common case (already at head) is answered by one SELECT on the store's own sqlite3 connection,
without importing SQLAlchemy or alembic: every read-only command stays free of both. A new store is made
at head from head_schema.py, free of both too; only an older store is migrated by alembic.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dunscaith.adapters.durable.lock import FlockLock
from dunscaith.adapters.store.sql.revisions import HEAD, KNOWN_REVISIONS, SQL_VERSIONS, known_revision, migrations_dir
from dunscaith.adapters.store.sql.revisions import alembic_config as shared_alembic_config
from dunscaith.adapters.store.sqlite import head_schema
from dunscaith.adapters.store.sqlite.engine import describe_sqlite_error, make_engine
from dunscaith.adapters.store.sqlite.opening import StoreRefused, quick_check
from dunscaith.ports.job_store import StoreError

if TYPE_CHECKING:
    from sqlalchemy import Engine

Rows = Callable[[str], Sequence[Any]]  # run one SQL statement, return its rows

__all__ = ["HEAD", "KNOWN_REVISIONS", "alembic_config", "ensure_schema", "migrations_dir", "require_head"]


def alembic_config(db_path: Path | None = None):  # type: ignore[no-untyped-def]
    return shared_alembic_config(**({"db_path": str(db_path)} if db_path is not None else {}))


class NotAStore(StoreError):
    def __init__(self, db: Path) -> None:
        super().__init__(f"{db} is a SQLite database but not a dunscaith record store; it is left as it is")


def current_revision(rows: Rows, db: Path) -> str | None:
    """The schema revision recorded in the database; None for a new, empty database."""
    tables = {row[0] for row in rows("SELECT name FROM sqlite_master WHERE type='table'")}
    if "alembic_version" not in tables:
        if tables:
            raise NotAStore(db)
        return None
    return known_revision(rows(SQL_VERSIONS), db, "records.root")


def require_head(conn: sqlite3.Connection, db: Path, why: str) -> None:
    """A store read without a lock (nothing may be written): its schema must be this build's already."""
    found = current_revision(lambda sql: conn.execute(sql).fetchall(), db)
    if found != HEAD:
        raise StoreError(f"record store {db} needs its schema brought up to date, which cannot be written now: "
                         f"{why}")


def ensure_schema(conn: sqlite3.Connection, db: Path, lock_path: Path, *, busy_timeout_ms: int,
                  created: bool = False) -> None:
    """Bring the store to HEAD. ``created``: this call made the file and holds the schema lock already;
    only then is a store with no schema given one (opening.py refuses any other)."""
    conn.execute("BEGIN")  # deferred: one snapshot, never waiting for a writer
    try:
        found = current_revision(lambda sql: conn.execute(sql).fetchall(), db)
    finally:
        conn.execute("ROLLBACK")
    if found == HEAD:
        return
    if created:
        if found is None and head_schema.REVISION == HEAD:
            _create_at_head(conn)
        else:
            _migrate(db, busy_timeout_ms)
        return
    if found is None:
        raise StoreRefused(db, "has no schema (an empty SQLite database, not a record store)")
    problem = quick_check(conn)  # a migration rewrites tables: never over a damaged page
    if problem is not None:
        raise StoreRefused(db, f"fails its integrity check (quick_check: {problem})")
    lock = FlockLock(lock_path)
    lock.acquire(blocking=True)  # a second opener waits for the first migration, then finds head
    try:
        _migrate(db, busy_timeout_ms)
    finally:
        lock.release()


def _create_at_head(conn: sqlite3.Connection) -> None:
    """A new store's schema, all at once: what alembic's history makes from nothing (head_schema.py)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in head_schema.STATEMENTS:
            conn.execute(statement)
        conn.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (HEAD,))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _migrate(db: Path, busy_timeout_ms: int) -> None:
    engine = make_engine(db, busy_timeout_ms=busy_timeout_ms)
    try:
        _upgrade(engine, db, busy_timeout_ms)
    finally:
        engine.dispose()


def _upgrade(engine: Engine, db: Path, busy_timeout_ms: int) -> None:
    # Imported here: only a store that needs migrating pays for alembic (and SQLAlchemy).
    from alembic import command
    from alembic.util import CommandError
    from sqlalchemy.exc import SQLAlchemyError

    if not (migrations_dir() / "env.py").is_file():
        raise StoreError(
            f"record store {db} needs schema {HEAD}, but the migrations are not installed (expected in "
            f"{migrations_dir()}): install dunscaith from its source tree (pip install -e .)"
        )
    config = alembic_config(db)
    try:
        with engine.begin() as conn:  # BEGIN IMMEDIATE: the whole upgrade is one transaction
            # Another process may have migrated while we waited for the lock.
            found = current_revision(lambda sql: conn.exec_driver_sql(sql).fetchall(), db)
            if found == HEAD:
                return
            conn.exec_driver_sql("PRAGMA defer_foreign_keys=ON")
            config.attributes["connection"] = conn
            try:
                command.upgrade(config, "head")
            except CommandError as exc:
                raise StoreError(f"record store {db} cannot be migrated to schema {HEAD}: {exc}") from None
            if conn.exec_driver_sql("PRAGMA foreign_key_check").first():
                raise StoreError(f"record store {db}: foreign key violations after migrating to schema {HEAD}")
    except SQLAlchemyError as exc:
        raise StoreError(describe_sqlite_error(db, exc, busy_timeout_ms)) from None
