"""SQLite as a store kind (``records.backend = "sqlite"``, the default): one file under records.root."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from dunscaith.adapters.store.sqlite import STORE_FILE

if TYPE_CHECKING:
    from dunscaith.adapters.store.opening import OpenedStore, StoreOpening
    from dunscaith.adapters.store.sqlite.store import SqliteStore
    from dunscaith.ports.job_store import JobStore

# Its records are one host's own (a file under the record root), so a job recorded here is reached on that host.
SHARED_BY_LOGIN_NODES = False
DIALECT = "sqlite"


def settings_model() -> None:
    """No keys of its own in [records] (records.root is every kind's)."""
    return None


def open_store(opening: StoreOpening) -> OpenedStore:
    from dunscaith.adapters.store.sqlite.store import SqliteStore

    # never a new store where this host's pointers name jobs; on a full or read-only root, read without a lock
    return SqliteStore.open(opening.root, opening.host(), recorded_in=opening.recorded_in, unlocked_reads=True)


def store_exists(opening: StoreOpening) -> bool:
    """Whether records.root holds a store to look in, asked without making anything: its file, or a root
    bound to this host (a store file lost: opening it says so). A root that could never be one is refused
    here, in the words opening it would use; one not made yet (a login node where nothing was recorded)
    has none, and a command that only looks (``list``, a sweep's name) makes none."""
    from dunscaith.adapters.store.record_root import check_record_root

    return os.path.lexists(opening.root / STORE_FILE) or check_record_root(opening.root, opening.host())


def write_check(store: JobStore) -> str | None:
    """SQLite's page check, before a command's first side effect outside the store."""
    return cast("SqliteStore", store).integrity_problem()


doctor_check = write_check


def migration_metadata() -> list[Any]:
    from dunscaith.adapters.store.sql.tables import metadata

    return [metadata]
