"""A new SQLite store is made from ``head_schema.py`` without alembic: it must be the store alembic's history
makes from nothing, table for table, index for index, statement for statement. That it is made without
importing either is tests/integration/store/test_sqlite_imports.py's.

Run as a module to print ``adapters/store/sqlite/head_schema.py`` anew after adding a migration:
``.venv/bin/python -m tests.integration.store.test_sqlite_head_schema > adapters/store/sqlite/head_schema.py``
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
from pathlib import Path

from alembic import command

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite import head_schema
from dunscaith.adapters.store.sqlite.engine import connect
from dunscaith.adapters.store.sqlite.schema import HEAD, alembic_config
from dunscaith.adapters.store.sqlite.store import SqliteStore
from tests.integration.store.conftest import raw

_MODULE_DOC = '''"""The schema alembic's history gives a new SQLite store, as the statements SQLite kept of it.

A store made where none is gets these at once, with its revision, in one transaction: no alembic and no
SQLAlchemy to import, which were most of the first command's time in a new home. Generated from a store
migrated through ``migrations/`` from nothing; tests/integration/store/test_sqlite_head_schema.py fails,
and tells how to write this module anew, whenever the two differ. Older stores are migrated by alembic.
"""
'''


def migrated_from_nothing(db: Path) -> None:
    """The store alembic's history makes, on connections set up as the store's own."""
    connect(db, busy_timeout_ms=10_000).close()  # page size and WAL, as a store's first connection sets them
    command.upgrade(alembic_config(db), "head")


def kept_statements(db: Path) -> list[str]:
    with raw(db) as conn:
        return [row[0] for row in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]


def render(statements: list[str], revision: str) -> str:
    lines = [_MODULE_DOC, f'REVISION = "{revision}"', "", "STATEMENTS: tuple[str, ...] = ("]
    for statement in statements:
        pieces = [chunk for line in statement.splitlines(keepends=True) for chunk in _within_the_line_length(line)]
        if len(pieces) == 1:
            lines.append(f"    {statement!r},")
            continue
        lines.append("    (")
        lines.extend(f"        {piece!r}" for piece in pieces)
        lines.append("    ),")
    lines.append(")")
    return "\n".join(lines) + "\n"


def _within_the_line_length(line: str) -> list[str]:
    return textwrap.wrap(line, 96, expand_tabs=False, replace_whitespace=False, drop_whitespace=False,
                         break_on_hyphens=False) or [line]


def schema_of(db: Path) -> dict[str, object]:
    """Everything of a database's schema a store depends on."""
    with raw(db) as conn:
        pragmas = {name: conn.execute(f"PRAGMA {name}").fetchall()
                   for name in ("page_size", "journal_mode", "user_version", "application_id", "auto_vacuum",
                                "encoding")}
        return {
            "objects": sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall(),
                              key=repr),
            "version": conn.execute("SELECT version_num FROM alembic_version").fetchall(),
            "pragmas": pragmas,
            "rows": {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()
                     for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")},
        }


def test_head_schema_py_is_what_the_migrations_make_from_nothing(tmp_path: Path) -> None:
    db = tmp_path / "records.db"
    migrated_from_nothing(db)
    module = Path(head_schema.__file__).read_text()
    assert module == render(kept_statements(db), HEAD), (
        "adapters/store/sqlite/head_schema.py is not the schema the migrations make: write it anew with "
        "`.venv/bin/python -m tests.integration.store.test_sqlite_head_schema > adapters/store/sqlite/head_schema.py`")


def test_a_new_store_has_the_schema_tables_indexes_triggers_and_revision_of_a_migrated_one(tmp_path: Path) -> None:
    migrated = tmp_path / "migrated.db"
    migrated_from_nothing(migrated)
    SqliteStore.open(tmp_path / "records", SystemHost()).close()
    made = tmp_path / "records" / "records.db"
    assert schema_of(made) == schema_of(migrated)
    assert schema_of(made)["version"] == [(HEAD,)]


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "records.db"
        migrated_from_nothing(target)
        sys.stdout.write(render(kept_statements(target), HEAD))
