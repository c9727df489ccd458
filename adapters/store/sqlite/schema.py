"""Bring a store's schema to this build's head on open, under a lock; refuse one from a newer build.

The common case (already at head) is answered by one SELECT without importing alembic, which keeps
alembic off the import path of every read-only command.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection, Engine

from adapters.durable.lock import FlockLock
from ports.job_store import StoreError

# Every revision this build knows, oldest first; a test checks it against migrations/versions.
KNOWN_REVISIONS: tuple[str, ...] = ("0001",)
HEAD = KNOWN_REVISIONS[-1]


def migrations_dir() -> Path:
    # The alembic environment lives at the top of the source tree (installed editable: the repo).
    return Path(__file__).resolve().parents[3] / "migrations"


def alembic_config(db_path: Path | None = None):  # type: ignore[no-untyped-def]
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if db_path is not None:
        config.attributes["db_path"] = str(db_path)
    return config


class NewerSchema(StoreError):
    def __init__(self, db: Path, found: str) -> None:
        super().__init__(
            f"record store {db} was written by a newer dunscaith (schema {found}); this dunscaith knows "
            f"schemas up to {HEAD}: use the newer dunscaith, or another records.root"
        )


class NotAStore(StoreError):
    def __init__(self, db: Path) -> None:
        super().__init__(f"{db} is a SQLite database but not a dunscaith record store; it is left as it is")


def current_revision(conn: Connection, db: Path) -> str | None:
    """The schema revision recorded in the database; None for a new, empty database."""
    tables = {row[0] for row in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type='table'")}
    if "alembic_version" not in tables:
        if tables:
            raise NotAStore(db)
        return None
    revisions = [row[0] for row in conn.exec_driver_sql("SELECT version_num FROM alembic_version")]
    if len(revisions) != 1:
        raise StoreError(f"record store {db} has {len(revisions)} schema versions recorded, expected one")
    return str(revisions[0])


def check_revision(found: str | None, db: Path) -> None:
    if found is not None and found not in KNOWN_REVISIONS:
        raise NewerSchema(db, found)


def ensure_schema(engine: Engine, db: Path, lock_path: Path, *, read_only_option: str) -> None:
    with engine.connect().execution_options(**{read_only_option: True}) as conn:
        found = current_revision(conn, db)
    check_revision(found, db)
    if found == HEAD:
        return
    lock = FlockLock(lock_path)
    lock.acquire(blocking=True)  # a second opener waits for the first migration, then finds head
    try:
        _upgrade(engine, db)
    finally:
        lock.release()


def _upgrade(engine: Engine, db: Path) -> None:
    # Imported here: only a store that needs migrating pays for alembic.
    from alembic import command
    from alembic.util import CommandError

    if not (migrations_dir() / "env.py").is_file():
        raise StoreError(
            f"record store {db} needs schema {HEAD}, but the migrations are not installed (expected in "
            f"{migrations_dir()}): install dunscaith from its source tree (pip install -e .)"
        )
    config = alembic_config(db)
    with engine.begin() as conn:  # BEGIN IMMEDIATE: the whole upgrade is one transaction
        found = current_revision(conn, db)  # another process may have migrated while we waited
        check_revision(found, db)
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
