"""Issue 10: a store is created only by the call that creates its file; damage is refused or kept to its job."""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.opening import StoreRefused
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import RecordDamaged
from tests.infra.sqlite_pages import event_pages, zero_pages

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _digest(root: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.glob("records.db*"))}


def _three_jobs(root: Path, pad: int = 0) -> None:
    with SqliteStore.open(root, SystemHost()) as store:
        for job in ("j1", "j2", "j3"):
            store.create(JobId(job), T0, "created", {"spec": "x" * 50})
            for i in range(5):
                store.append(JobId(job), T0, "note", {"i": i, "pad": "p" * pad})


def _zero_event_data(db: Path) -> None:
    """The first four overflow pages of the events: the data of the first job's first events."""
    zero_pages(db, event_pages(db, "overflow")[:4])


def _zero_event_structure(db: Path) -> None:
    """Every leaf page of the events table: the pages that hold every job's events."""
    zero_pages(db, event_pages(db, "leaf"))


def test_empty_records_db_is_refused_and_left_empty(tmp_path: Path) -> None:
    root = tmp_path / "records"
    _three_jobs(root)
    (root / "records.db").write_bytes(b"")  # : > records.db
    before = _digest(root)
    with pytest.raises(StoreRefused) as caught:
        SqliteStore.open(root, SystemHost())
    message = str(caught.value)
    assert message.startswith(f"record store {root / 'records.db'} is empty (0 bytes); nothing was written to it")
    assert "restore it from a copy, or move it aside" in message and "dunscaith doctor" in message
    assert "\n" not in message
    assert _digest(root) == before and (root / "records.db").stat().st_size == 0


def test_sqlite_file_without_schema_is_refused_and_nothing_written(tmp_path: Path) -> None:
    root = tmp_path / "records"
    _three_jobs(root)
    for name in ("records.db", "records.db-wal", "records.db-shm"):
        (root / name).unlink(missing_ok=True)
    sqlite3.connect(root / "records.db").execute("PRAGMA user_version=1").connection.close()
    before = _digest(root)
    with pytest.raises(StoreRefused, match="has no schema"):
        SqliteStore.open(root, SystemHost())
    assert _digest(root) == before


@pytest.mark.parametrize("left", ["empty", "no schema"])
def test_a_creation_killed_before_its_schema_is_made_again_by_the_next_opener(tmp_path: Path, left: str) -> None:
    # kill -9 of the first command in a new root between the file's creation and its schema's commit: the
    # marker written before the file says no record was ever in it, and the next command makes it again
    root = tmp_path / "records"
    with SqliteStore.open(root, SystemHost()):
        pass
    assert not (root / "records.db.creating").exists()  # a whole store leaves no marker
    for name in ("records.db", "records.db-wal", "records.db-shm"):
        (root / name).unlink(missing_ok=True)
    (root / "records.db.creating").write_bytes(b"")
    if left == "empty":
        (root / "records.db").write_bytes(b"")
    else:
        sqlite3.connect(root / "records.db").execute("PRAGMA user_version=1").connection.close()
    with SqliteStore.open(root, SystemHost()) as store:
        store.create(JobId("j1"), T0, "created", {"spec": "x"})
    assert not (root / "records.db.creating").exists()
    with SqliteStore.open(root, SystemHost()) as store:
        assert store.jobs() == [JobId("j1")]


def test_a_marker_beside_a_whole_store_goes_and_its_records_stay(tmp_path: Path) -> None:
    root = tmp_path / "records"
    _three_jobs(root)
    (root / "records.db.creating").write_bytes(b"")  # killed after its schema, before the marker went
    with SqliteStore.open(root, SystemHost()) as store:
        assert sorted(store.jobs()) == ["j1", "j2", "j3"]
    assert not (root / "records.db.creating").exists()


def test_zeroed_page_in_event_data_damages_only_that_job(tmp_path: Path) -> None:
    root = tmp_path / "records"
    _three_jobs(root, pad=300)
    _zero_event_data(root / "records.db")
    with SqliteStore.open(root, SystemHost()) as store:
        assert store.jobs() == ["j1", "j2", "j3"]
        with pytest.raises(RecordDamaged) as caught:
            store.read(JobId("j1"))
        assert caught.value.job == "j1" and caught.value.event is not None
        assert len(store.read(JobId("j2")).events) == len(store.read(JobId("j3")).events) == 6
        store.append(JobId("j2"), T0, "note", {"after": "damage"})  # the file passes quick_check: others go on
        assert len(store.read(JobId("j2")).events) == 7


def test_a_damaged_record_is_left_out_of_read_many_and_every_other_one_read(tmp_path: Path) -> None:
    root = tmp_path / "records"
    _three_jobs(root, pad=300)
    _zero_event_data(root / "records.db")
    with SqliteStore.open(root, SystemHost()) as store:
        found = store.read_many([JobId("j1"), JobId("j2"), JobId("j3")])
        assert list(found) == ["j2", "j3"] and all(len(r.events) == 6 for r in found.values())
        with pytest.raises(RecordDamaged):  # read of it says where
            store.read(JobId("j1"))


def test_a_record_whose_last_events_do_not_read_is_left_out_of_read_many(tmp_path: Path) -> None:
    root = tmp_path / "records"
    _three_jobs(root)
    conn = sqlite3.connect(root / "records.db")  # j2's last events lost, its summary still counting them
    conn.execute("DROP TRIGGER IF EXISTS events_append_only_delete")
    conn.execute("DELETE FROM events WHERE seq > 3 AND job_id = 2")
    conn.commit()
    conn.close()
    with SqliteStore.open(root, SystemHost()) as store:
        assert list(store.read_many([JobId("j1"), JobId("j2"), JobId("j3")])) == ["j1", "j3"]
        with pytest.raises(RecordDamaged, match="summary counts 6 events"):
            store.read(JobId("j2"))


def test_zeroed_structural_page_refuses_every_write_and_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    root = tmp_path / "records"
    _three_jobs(root)
    _zero_event_structure(root / "records.db")
    before = _digest(root)
    with SqliteStore.open(root, SystemHost()) as store:
        with pytest.raises(RecordDamaged):
            store.read(JobId("j2"))
        with pytest.raises(StoreRefused, match=r"fails its integrity check \(quick_check: .*\); nothing was written"):
            store.append(JobId("j2"), T0, "note", {})
        with pytest.raises(StoreRefused):
            store.create(JobId("j4"), T0, "created", {})
    assert _digest(root) == before


def test_another_programs_file_named_records_db_is_left_byte_for_byte(tmp_path: Path) -> None:
    root = tmp_path / "records"
    _three_jobs(root)
    for name in ("records.db-wal", "records.db-shm"):
        (root / name).unlink(missing_ok=True)
    (root / "records.db").write_bytes(b"my thesis, not a database\n" * 100)
    before = _digest(root)
    with pytest.raises(StoreRefused, match="is not a SQLite database"):
        SqliteStore.open(root, SystemHost())
    assert _digest(root) == before


def test_a_byte_that_is_not_utf8_in_an_event_damages_only_that_job(tmp_path: Path) -> None:
    root = tmp_path / "records"
    _three_jobs(root, pad=300)
    conn = sqlite3.connect(root / "records.db")
    conn.execute("DROP TRIGGER IF EXISTS events_append_only_update")
    conn.execute("UPDATE events SET data = CAST(X'7B2278223A2280227D' AS TEXT) WHERE seq = 2 AND job_id = 1")
    conn.commit()
    conn.close()
    with SqliteStore.open(root, SystemHost()) as store:
        with pytest.raises(RecordDamaged, match="UTF-8"):
            store.read(JobId("j1"))
        assert len(store.read(JobId("j2")).events) == 6


@pytest.mark.parametrize("damage", ['{"state":', "[1]", "null"])
def test_a_damaged_row_among_identical_ones_is_reported_at_its_own_seq(tmp_path: Path, damage: str) -> None:
    # One read decodes each distinct text once: a damaged row is still its own text, at its own seq.
    root = tmp_path / "records"
    with SqliteStore.open(root, SystemHost()) as store:
        store.create(JobId("j1"), T0, "created", {})
        for _ in range(9):
            store.append(JobId("j1"), T0, "seen", {"state": "running"})
        assert len(store.read(JobId("j1")).events) == 10  # read once whole, the rows kept for the next read
    conn = sqlite3.connect(root / "records.db")
    conn.execute("DROP TRIGGER IF EXISTS events_append_only_update")
    conn.execute("UPDATE events SET data = ? WHERE seq = 7", (damage,))
    conn.commit()
    conn.close()
    with SqliteStore.open(root, SystemHost()) as store:
        for _ in range(2):
            with pytest.raises(RecordDamaged) as caught:
                store.read(JobId("j1"))
            assert caught.value.job == "j1" and caught.value.event == 7
