from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.record_root import open_record_root
from dunscaith.adapters.store.sqlite.store import SqliteStore

OpenStore = Callable[..., SqliteStore]  # opens a store with the keyword arguments given; closed after the test


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "records"


@pytest.fixture
def open_store(root: Path) -> Iterator[OpenStore]:
    """Open the store at ``root``, with ``SqliteStore.open``'s keyword arguments; each is closed after the test."""
    opened: list[SqliteStore] = []

    def _open(**kwargs: Any) -> SqliteStore:
        store = SqliteStore.open(root, SystemHost(), **kwargs)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


def bound(root: Path) -> Path:
    """An empty record root of this host (HOST written, no store yet), as a first open leaves it."""
    open_record_root(root, SystemHost())
    return root


def raw(db: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection, as another program (or an older/newer dunscaith) would open the file."""
    return sqlite3.connect(db, isolation_level=None)


def run_child(code: str, *, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=cwd)
