"""Bring a PostgreSQL store to this build's head on open, under an advisory lock; refuse a newer one.

The common case (at head) costs one query on the store's own psycopg connection, with neither
SQLAlchemy nor alembic imported. A migration runs in one transaction (PostgreSQL's DDL is
transactional) that first takes a transaction-scoped advisory lock: two openers on two login nodes
migrate one after the other, and the second finds head.
"""

from __future__ import annotations

from typing import Any

from dunscaith.adapters.store.postgres.target import LONG_STATEMENT, PostgresTarget
from dunscaith.adapters.store.sql.revisions import HEAD, SQL_VERSIONS, alembic_config, known_revision, migrations_dir
from dunscaith.ports.job_store import StoreError

# pg_advisory_xact_lock's key for "one migration at a time" (the job locks use another key space).
SCHEMA_LOCK_KEY = 0x6475_6E73_6361_0001  # "dunsca" + 1

_SQL_STATE = (
    "SELECT to_regclass('alembic_version') IS NOT NULL, "
    "(SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema())"
)


class NotAStore(StoreError):
    def __init__(self, where: str) -> None:
        super().__init__(f"database {where} holds other tables but is not a dunscaith record store; it is left as "
                         "it is: give dunscaith a database of its own (records.url)")


def current_revision(conn: Any, where: str) -> str | None:
    """The revision recorded in the database; None for a new, empty one. ``conn``: psycopg or SQLAlchemy."""
    run = conn.exec_driver_sql if hasattr(conn, "exec_driver_sql") else conn.execute
    has_version, tables = run(_SQL_STATE).fetchone()
    if not has_version:
        if tables:
            raise NotAStore(where)
        return None
    return known_revision(run(SQL_VERSIONS).fetchall(), where, "records.url")


def ensure_schema(conn: Any, target: PostgresTarget) -> None:
    """``conn``: the store's psycopg connection (autocommit)."""
    where = target.location()
    found = current_revision(conn, where)
    if found != HEAD:
        _upgrade(target, where)


def _upgrade(target: PostgresTarget, where: str) -> None:
    from alembic import command
    from alembic.util import CommandError
    from sqlalchemy import create_engine, pool, text
    from sqlalchemy.exc import SQLAlchemyError

    if not (migrations_dir() / "env.py").is_file():
        raise StoreError(
            f"record store {where} needs schema {HEAD}, but the migrations are not installed (expected in "
            f"{migrations_dir()}): install dunscaith from its source tree (pip install -e .)"
        )
    # A migration may rewrite every record: its statements (and its wait for another opener's) are bounded
    # by LONG_STATEMENT on both sides, not by the detection time a supervisor's statements have.
    engine = create_engine("postgresql+psycopg://", poolclass=pool.NullPool,
                           creator=lambda: target.connect(autocommit=False, answer_within=LONG_STATEMENT))
    long_ms = int(LONG_STATEMENT * 1000)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"SET LOCAL statement_timeout = {long_ms}"))
            conn.execute(text(f"SET LOCAL lock_timeout = {long_ms}"))
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
            found = current_revision(conn, where)  # another opener may have migrated while we waited
            if found == HEAD:
                return
            config = alembic_config(connection=conn)
            try:
                command.upgrade(config, "head")
            except CommandError as exc:
                raise StoreError(f"record store {where} cannot be migrated to schema {HEAD}: {exc}") from None
    except SQLAlchemyError as exc:
        detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise StoreError(f"record store {where} cannot be migrated to schema {HEAD}: {detail}") from None
    finally:
        engine.dispose()
