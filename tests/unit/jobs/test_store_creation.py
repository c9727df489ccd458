"""StoreCreation: a store is made only where no pointer of this host names its root (issue 22 item 10),
and the SQLite store asks it only when it has no file yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.services.jobs.store_creation import StoreCreation
from dunscaith.ports.job_store import StoreMissing
from tests.unit.jobs.test_pointer_survey import HERE, THERE, _pointer


def _creation(*pointers) -> StoreCreation:  # type: ignore[no-untyped-def]
    kept = InMemoryPointers()
    for pointer in pointers:
        kept.write(pointer)
    return StoreCreation(kept, HERE)


def test_only_this_hosts_pointers_naming_that_very_root_count() -> None:
    creation = _creation(_pointer("mine", "running", HERE, root="/var/tmp/r"),
                         _pointer("other-root", "running", HERE, root="/var/tmp/old"),
                         _pointer("other-host", "running", THERE, root="/var/tmp/r"))
    assert creation.named_by_pointers("/var/tmp/r") == ["mine"]
    assert creation.named_by_pointers("/var/tmp/new") == []


def test_pointers_that_cannot_be_read_never_stop_a_first_use() -> None:
    class Broken(InMemoryPointers):
        def all(self):  # type: ignore[no-untyped-def]
            raise PermissionError("home not readable")

    assert StoreCreation(Broken(), HERE).named_by_pointers("/var/tmp/r") == []


def test_the_sqlite_store_refuses_to_make_a_store_the_pointers_name_and_makes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "records"
    asked: list[str] = []

    def named(location: str) -> list[str]:
        asked.append(location)
        return ["seed", "j2"]

    with pytest.raises(StoreMissing) as caught:
        SqliteStore.open(root, SystemHost(), recorded_in=named)
    assert str(caught.value).startswith(f"record store {root / 'records.db'} is missing, but 2 pointer(s)")
    assert "(seed, j2)" in str(caught.value) and "dunscaith doctor" in str(caught.value)
    assert asked == [str(root)] and not (root / "records.db").exists()

    SqliteStore.open(root, SystemHost()).close()  # made by a call that was not asked to check
    asked.clear()
    SqliteStore.open(root, SystemHost(), recorded_in=named).close()  # an existing store is never asked about
    assert asked == []
