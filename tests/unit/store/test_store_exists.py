"""Whether records.root holds a store to look in, asked without making anything (wiring.store_exists,
record_root.check_record_root): a login node where nothing was ever recorded has none, and a command that only
looks a name up, or lists, makes none; a root that could never be one is refused in the words opening it uses."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store import sqlite
from dunscaith.adapters.store.record_root import HOST_FILE, open_record_root
from dunscaith.adapters.store.sqlite import store
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.root_errors import RecordRootRefused
from dunscaith.entrypoints.dunscaith.root import wiring
from dunscaith.ports.host import HostInfo


def sqlite_store_exists(root: Path, host: HostInfo) -> bool:
    """The composition root's ``store_exists`` of a SQLite store in ``root``."""
    settings: Any = SimpleNamespace(records=SimpleNamespace(backend="sqlite", root=root))
    return wiring.store_exists(settings, wiring.store_opening(settings, host))


def _listing(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_a_root_never_made_has_no_store_and_asking_makes_nothing(tmp_path: Path) -> None:
    host = SystemHost()
    assert not sqlite_store_exists(tmp_path / "a" / "records", host)
    (tmp_path / "empty").mkdir(mode=0o700)
    (tmp_path / "empty" / "local-scheduler").mkdir(mode=0o700)  # a command that opens no store made it
    assert not sqlite_store_exists(tmp_path / "empty", host)
    assert _listing(tmp_path) == ["empty", "empty/local-scheduler"]


def test_a_root_bound_here_has_one_even_when_its_file_was_lost_and_so_has_a_file_without_a_host(
        tmp_path: Path) -> None:
    host = SystemHost()
    open_record_root(tmp_path / "records", host)  # bound: its HOST, no records.db (lost, say)
    assert sqlite_store_exists(tmp_path / "records", host)
    (tmp_path / "records" / HOST_FILE).unlink()
    (tmp_path / "records" / "records.db").write_bytes(b"")  # a store of a build that wrote no HOST
    assert sqlite_store_exists(tmp_path / "records", host)


class _Elsewhere(SystemHost):
    def identity(self) -> HostIdentity:
        return HostIdentity(machine_id="0" * 32, hostname="elsewhere")


@pytest.mark.parametrize("make", ["file-in-the-way", "loop", "other-files", "another-host", "too-long", "no-write"])
def test_a_root_opening_would_refuse_is_refused_in_its_words_and_nothing_is_made(tmp_path: Path, make: str) -> None:
    base = tmp_path / "base"
    base.mkdir()
    host = SystemHost()
    if make == "file-in-the-way":
        (base / "file").write_text("")
        root = base / "file" / "r"
    elif make == "loop":
        os.symlink("loop2", base / "loop1")
        os.symlink("loop1", base / "loop2")
        root = base / "loop1" / "r"
    elif make == "other-files":
        root = base / "mine"
        root.mkdir(mode=0o700)
        (root / "thesis.tex").write_text("x")
    elif make == "another-host":
        root = base / "r"
        open_record_root(root, _Elsewhere())
    elif make == "too-long":
        root = base / ("n" * 300) / "r"
    else:
        if os.geteuid() == 0:
            pytest.skip("root may write anywhere")
        (base / "ro").mkdir(mode=0o500)
        root = base / "ro" / "r"
    before = _listing(base)
    with pytest.raises(RecordRootRefused) as checked:
        sqlite_store_exists(root, host)
    assert _listing(base) == before
    with pytest.raises(RecordRootRefused) as opened:
        open_record_root(root, host)
    assert str(checked.value) == str(opened.value)


def test_the_file_sqlite_declares_is_the_one_it_makes() -> None:
    assert sqlite.STORE_FILE == store.DB_FILE == "records.db"
