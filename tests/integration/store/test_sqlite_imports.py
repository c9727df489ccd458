"""What reading a record costs at start-up: the store reads and writes on sqlite3 alone.

SQLAlchemy (~150 ms of imports; its ORM 60-90 ms more) is for migrations only: making a new store,
opening one at the current schema, reading and appending never import it.
"""

from __future__ import annotations

from pathlib import Path

from tests.integration.store.conftest import raw, run_child

_OPEN = (
    "import sys, pathlib, datetime;"
    "from dunscaith.adapters.host.system import SystemHost;"
    "from dunscaith.adapters.store.sqlite.store import SqliteStore;"
    "T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC);"
    "s = SqliteStore.open(pathlib.Path({root!r}), SystemHost());"
)
_LOADED = "print(sorted({m.split('.')[0] + ('.orm' if m.startswith('sqlalchemy.orm') else '') "\
          "for m in sys.modules if m.startswith(('sqlalchemy', 'alembic'))}))"


def test_a_store_at_the_current_schema_reads_and_appends_without_sqlalchemy(tmp_path: Path) -> None:
    root = str(tmp_path / "records")
    made = run_child(_OPEN.format(root=root) + "s.create('job', T0, 'created', {'a': 1}); s.close()")
    assert made.returncode == 0, made.stderr
    used = run_child(_OPEN.format(root=root)
                     + "s.append('job', T0, 'noted', {}); print([e.kind for e in s.read('job').events], s.jobs());"
                     + "s.close();" + _LOADED)
    assert used.returncode == 0, used.stderr
    assert used.stdout == "['created', 'noted'] ['job']\n[]\n"


def test_a_new_store_is_made_without_either(tmp_path: Path) -> None:
    made = run_child(_OPEN.format(root=str(tmp_path / "records")) + "s.close();" + _LOADED)
    assert made.returncode == 0, made.stderr
    assert made.stdout == "[]\n"


def test_a_store_of_an_older_schema_is_migrated_with_alembic_and_never_the_orm(tmp_path: Path) -> None:
    root = tmp_path / "records"
    assert run_child(_OPEN.format(root=str(root)) + "s.close()").returncode == 0
    with raw(root / "records.db") as conn:  # as revision 0004 left it: no sweep columns
        conn.execute("DROP INDEX ix_summaries_sweep")
        conn.execute("ALTER TABLE summaries DROP COLUMN sweep_index")
        conn.execute("ALTER TABLE summaries DROP COLUMN sweep")
        conn.execute("UPDATE alembic_version SET version_num = '0004'")
    made = run_child(_OPEN.format(root=str(root)) + "s.close();" + _LOADED)
    assert made.returncode == 0, made.stderr
    assert made.stdout == "['alembic', 'sqlalchemy']\n"
