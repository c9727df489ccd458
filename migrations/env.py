"""Alembic environment for the SQLite job store.

The store migrates itself on open and hands its connection in ``config.attributes["connection"]``
(already inside its BEGIN IMMEDIATE transaction, under the store's schema lock). From the command
line, name the database: ``alembic -x db=/var/tmp/dunscaith-$USER/records.db upgrade head``.
"""

from __future__ import annotations

from pathlib import Path

from alembic import context

from adapters.store.sqlite.engine import make_engine
from adapters.store.sqlite.tables import metadata

config = context.config
target_metadata = metadata


def _configure(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite alters tables by copying them; from revision one on
    )


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    db = context.get_x_argument(as_dictionary=True).get("db") or config.attributes.get("db_path")
    if not db:
        raise SystemExit("name the record store: alembic -x db=PATH/records.db ...")
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


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported for the job store")
run_migrations_online()
