"""Alembic environment for the SQL job stores: one history for SQLite and PostgreSQL.

A store migrates itself on open and hands its connection in ``config.attributes["connection"]``
(already inside its transaction, under the store's schema lock: SQLite's BEGIN IMMEDIATE and flock,
PostgreSQL's transaction-scoped advisory lock). From the command line, name the database:
``alembic -x db=/var/tmp/dunscaith-$USER/records.db current`` (SQLite) or
``alembic -x url=postgresql://alice@db1/dunscaith current`` (PostgreSQL; the password from libpq's
``~/.pgpass``).
"""

from __future__ import annotations

from pathlib import Path

from alembic import context

from dunscaith.adapters.store.sql.tables import metadata
from dunscaith.adapters.store.sqlite.engine import make_engine
from dunscaith.entrypoints.dunscaith.root.kinds import store_of_dialect

config = context.config
target_metadata = metadata


def _configure(connection) -> None:  # type: ignore[no-untyped-def]
    # the tables of the store kind whose dialect this database speaks (entrypoints/dunscaith/root/kinds.py)
    context.configure(
        connection=connection,
        target_metadata=store_of_dialect(connection.dialect.name).migration_metadata(),
        render_as_batch=True,  # SQLite alters tables by copying them; from revision one on
    )


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    arguments = context.get_x_argument(as_dictionary=True)
    if arguments.get("url"):
        _run_postgres(arguments["url"])
        return
    db = arguments.get("db") or config.attributes.get("db_path")
    if not db:
        raise SystemExit("name the record store: alembic -x db=PATH/records.db ... or -x url=postgresql://...")
    # Foreign keys off while migrating: a batch copy of a referenced table would trip them.
    engine = make_engine(Path(db), busy_timeout_ms=30_000, foreign_keys=False)
    try:
        with engine.connect() as connection:
            _configure(connection)
            with context.begin_transaction():
                context.run_migrations()
                if connection.exec_driver_sql("PRAGMA foreign_key_check").first():
                    raise RuntimeError("foreign key violations after migration")
    finally:
        engine.dispose()


def _run_postgres(url: str) -> None:
    """By hand, as the store does on open: one transaction, under the store's schema advisory lock."""
    from sqlalchemy import create_engine, pool, text

    from dunscaith.adapters.store.postgres.schema import SCHEMA_LOCK_KEY

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1), poolclass=pool.NullPool)
    try:
        with engine.begin() as connection:
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
            _configure(connection)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported for the job store")
run_migrations_online()
