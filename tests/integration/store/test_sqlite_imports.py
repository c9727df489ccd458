"""What reading a record costs at start-up: the store reads without the ORM (60-90 ms of imports)."""

from __future__ import annotations

from tests.integration.store.conftest import run_child


def test_opening_and_reading_a_store_never_imports_the_orm(tmp_path):
    code = (
        "import sys, pathlib, datetime;"
        "from adapters.host.system import SystemHost;"
        "from adapters.store.sqlite.store import SqliteStore;"
        f"s = SqliteStore.open(pathlib.Path({str(tmp_path / 'records')!r}), SystemHost());"
        "s.create('job', datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC), 'created', {'a': 1});"
        "print(s.read('job').events[0].data, s.jobs()); s.close();"
        "print(sorted(m for m in sys.modules if m.startswith('sqlalchemy.orm')))"
    )
    result = run_child(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "{'a': 1} ['job']\n[]\n"
