"""Whether there is a store to look in without making one (entrypoints/dunscaith/store_kinds.py): a login
node where nothing was ever recorded has none, and a command that only looks a name up, or lists, makes none."""

from __future__ import annotations

from pathlib import Path

from dunscaith.adapters.store import record_root, sqlite
from dunscaith.adapters.store.sqlite import store
from dunscaith.entrypoints.dunscaith.store_kinds import store_exists


def test_a_root_where_no_store_was_ever_opened_has_none(tmp_path: Path) -> None:
    assert not store_exists("sqlite", tmp_path / "records")
    (tmp_path / "records").mkdir()  # a folder alone (a scheduler's, say) is no store
    assert not store_exists("sqlite", tmp_path / "records")


def test_a_root_a_store_was_opened_in_has_one_even_when_its_file_was_lost(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "HOST").write_text("")  # its file lost: opening it says so (StoreMissing)
    assert store_exists("sqlite", tmp_path / "records")
    (tmp_path / "records" / "HOST").unlink()
    (tmp_path / "records" / "records.db").write_text("")
    assert store_exists("sqlite", tmp_path / "records")


def test_a_server_and_an_unknown_kind_are_always_asked(tmp_path: Path) -> None:
    assert store_exists("postgresql", tmp_path / "nothing")
    assert store_exists("something-new", tmp_path / "nothing")


def test_the_files_sqlite_declares_are_the_ones_it_makes() -> None:
    assert sqlite.STORE_FILES == (record_root.HOST_FILE, store.DB_FILE)
