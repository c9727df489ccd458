"""SQLite on disk: durable settings as configured, damage reported in one line, many writers in turn."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.opening import recovery_advice
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import StoreError
from tests.expect import present
from tests.integration.store.conftest import OpenStore, bound, raw

T0 = datetime(2026, 1, 1, tzinfo=UTC)


# --- damage: one clear StoreError, the file left as it was ------------------------------------------


def test_a_file_that_is_not_a_database_is_refused_in_one_line_and_left_alone(open_store: OpenStore, root: Path) -> None:
    bound(root)
    garbage = b"these are not the records you are looking for\n" * 200
    (root / "records.db").write_bytes(garbage)
    with pytest.raises(StoreError) as caught:
        open_store()
    message = str(caught.value)
    assert message == (
        f"record store {root / 'records.db'} is not a SQLite database (damaged, or another program's file); "
        f"{recovery_advice(root / 'records.db')}"
    )
    assert (root / "records.db").read_bytes() == garbage


def _filled(open_store: OpenStore, root: Path, events: int = 300) -> None:
    store = open_store()
    store.create(JobId("job"), T0, "created", {})
    for i in range(events):
        store.append(JobId("job"), T0, "note", {"i": i, "pad": "x" * 200})
    store.close()  # the last connection checkpoints the WAL into the database file
    assert not (root / "records.db-wal").exists()


def test_a_truncated_database_is_reported_as_damaged_never_as_a_traceback(open_store: OpenStore, root: Path) -> None:
    _filled(open_store, root)
    db = root / "records.db"
    os.truncate(db, db.stat().st_size // 2)
    with pytest.raises(StoreError) as caught:
        open_store().read(JobId("job"))
    assert str(caught.value).startswith(f"record store {db} is damaged")
    assert "\n" not in str(caught.value)


def test_a_database_truncated_inside_its_header_is_reported_as_damaged(open_store: OpenStore, root: Path) -> None:
    _filled(open_store, root, events=1)
    db = root / "records.db"
    os.truncate(db, 40)
    with pytest.raises(StoreError, match="is damaged"):
        open_store()
    assert db.stat().st_size == 40


def test_a_database_path_that_is_a_directory_is_refused_in_one_line(open_store: OpenStore, root: Path) -> None:
    (bound(root) / "records.db").mkdir()
    with pytest.raises(StoreError) as caught:
        open_store()
    assert str(caught.value).startswith(f"record store {root / 'records.db'} cannot be used: ")
    assert "\n" not in str(caught.value)


def test_a_database_file_that_is_a_symlink_is_refused(open_store: OpenStore, root: Path, tmp_path: Path) -> None:
    bound(root)
    (root / "records.db").symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(StoreError, match="symbolic link"):
        open_store()
    assert not (tmp_path / "elsewhere.db").exists()


def test_a_broken_store_reports_damage_from_a_command_line_without_a_traceback(root: Path) -> None:
    bound(root)
    (root / "records.db").write_bytes(b"\0garbage" * 100)
    code = (
        "import pathlib, sys; from dunscaith.adapters.host.system import SystemHost;"
        "from dunscaith.adapters.store.sqlite.store import SqliteStore;"
        "from dunscaith.ports.job_store import StoreError\n"
        f"try: SqliteStore.open(pathlib.Path({str(root)!r}), SystemHost())\n"
        "except StoreError as exc: print(exc, file=sys.stderr); sys.exit(2)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "is not a SQLite database" in result.stderr


# --- the settings durability rests on ----------------------------------------------------------------


def test_every_connection_is_wal_synchronous_full_with_a_busy_timeout(open_store: OpenStore, root: Path) -> None:
    store = open_store(busy_timeout_ms=4321)
    store.create(JobId("job"), T0, "created", {})  # opens the writer beside the reader
    connections = [store._reader, store._writer]
    for conn in connections:
        assert conn is not None
        pragma = {name: conn.execute(f"PRAGMA {name}").fetchone()[0]
                  for name in ("journal_mode", "synchronous", "busy_timeout", "foreign_keys")}
        assert pragma == {"journal_mode": "wal", "synchronous": 2, "busy_timeout": 4321, "foreign_keys": 1}
    with raw(root / "records.db") as conn:  # WAL is a property of the file: any later opener sees it
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_the_database_its_wal_and_the_lock_files_are_private(open_store: OpenStore, root: Path) -> None:
    store = open_store()
    store.create(JobId("job"), T0, "created", {})
    with store.lock(JobId("job")):
        pass
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(root / "locks").st_mode) == 0o700
    for name in ("records.db", "records.db-wal", "HOST"):
        assert stat.S_IMODE(os.stat(root / name).st_mode) == 0o600, name
    assert [stat.S_IMODE(p.stat().st_mode) for p in (root / "locks").iterdir()] == [0o600]


def test_the_lock_file_of_any_job_name_stays_inside_the_locks_directory(open_store: OpenStore, root: Path) -> None:
    store = open_store()
    for name in ("../escape", "..", "a/b", "x" * 400, "Zürich job"):
        with store.lock(JobId(name)) as held:
            held.beat(T0)
        assert store.health(JobId(name)).last_loop == T0
    assert not (root / "escape.lock").exists()
    assert {p.parent for p in root.rglob("job-*.lock")} == {root / "locks"}
    assert len(list((root / "locks").iterdir())) == 5


def test_the_store_identity_names_the_file_and_the_host(open_store: OpenStore, root: Path) -> None:
    store = open_store()
    identity = store.identity()
    st = os.stat(root / "records.db")
    assert (identity.backend, identity.location, identity.device, identity.inode) == (
        "sqlite", str(root / "records.db"), st.st_dev, st.st_ino)
    assert identity.host == store.root.host


# --- many writers -------------------------------------------------------------------------------------

APPENDER = """
import json, os, pathlib, sys, time
from datetime import datetime, UTC
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.opening import recovery_advice
from dunscaith.adapters.store.sqlite.store import SqliteStore
root, go, me, count = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
store = SqliteStore.open(root, SystemHost())
print("ready", flush=True)
deadline = time.monotonic() + 120
while not go.exists() and time.monotonic() < deadline:  # start together: the most contention
    time.sleep(0.01)
seqs = [store.append("shared", datetime.now(UTC), "note", {"writer": me, "i": i}) for i in range(count)]
print(json.dumps(seqs))
"""


@pytest.mark.slow
def test_fifty_processes_appending_at_once_lose_nothing_duplicate_nothing_and_never_see_locked(open_store: OpenStore,
                                                                                               root: Path) -> None:
    writers, each = 50, 10
    open_store().create(JobId("shared"), T0, "created", {})
    go = root.parent / "go"
    children = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(root), str(go), str(me), str(each)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for me in range(writers)
    ]
    for child in children:  # all open and waiting: the appends then overlap as much as they can
        assert present(child.stdout).readline() == "ready\n"
    go.touch()
    outputs = [child.communicate(timeout=300) for child in children]
    failures = [(child.returncode, err) for child, (_, err) in zip(children, outputs, strict=True) if child.returncode]
    assert failures == []
    assert not any("locked" in err for _, err in outputs)
    acknowledged = sorted(seq for out, _ in outputs for seq in json.loads(out))
    total = 1 + writers * each
    assert acknowledged == list(range(2, total + 1))  # every seq handed out once
    record = open_store().read(JobId("shared"))
    assert [e.seq for e in record.events] == list(range(1, total + 1))
    for me in range(writers):  # each writer's events in the order it appended them
        assert [e.data["i"] for e in record.events if e.data.get("writer") == me] == list(range(each))


def test_a_writer_killed_while_nobody_else_has_the_store_open_leaves_every_acknowledged_event(root: Path) -> None:
    code = (
        "import pathlib; from datetime import datetime, UTC; from dunscaith.adapters.host.system import SystemHost;"
        "from dunscaith.adapters.store.sqlite.store import SqliteStore\n"
        f"store = SqliteStore.open(pathlib.Path({str(root)!r}), SystemHost())\n"
        "store.create('alone', datetime.now(UTC), 'created', {})\n"
        "for i in range(100_000):\n"
        "    print(store.append('alone', datetime.now(UTC), 'note', {'i': i}), flush=True)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    acknowledged: list[int] = []
    try:
        while len(acknowledged) < 250:  # past a checkpoint (every 100 pages), so the WAL has been reused
            acknowledged.append(int(present(child.stdout).readline()))
    finally:
        child.kill()
        child.wait()
    assert (root / "records.db-wal").exists()  # not checkpointed away: the next opener must recover it
    with SqliteStore.open(root, SystemHost()) as store:
        seqs = [e.seq for e in store.read(JobId("alone")).events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert set(acknowledged) <= set(seqs)
