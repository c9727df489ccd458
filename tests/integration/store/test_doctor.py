"""Issue 10: the Doctor use case over a real SQLite store, pointer files and residual files; it writes nothing."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.host.fake import FakeHost
from dunscaith.adapters.pointers.files import FilePointers
from dunscaith.adapters.residual.files import FileResidualList
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.services.jobs.doctor import Doctor
from dunscaith.domain.services.jobs.submit import RecordJob

HOST = FakeHost(machine_id="1" * 32, hostname="login1")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


class _NoCrash:
    def reached(self, point: str) -> None:
        pass


@pytest.fixture
def home(tmp_path: Path) -> dict[str, Path]:
    return {"root": tmp_path / "records", "jobs": tmp_path / "cfg" / "dunscaith" / "jobs",
            "residual": tmp_path / "cfg" / "dunscaith" / "residual"}


def _record(home: dict[str, Path], *names: str) -> None:
    with SqliteStore.open(home["root"], HOST) as store:
        for name in names:
            RecordJob(store, FakeClock(T0), _NoCrash())(JobSpec(JobId(name), "local", "local", ("true",)))
    for name in names:
        FilePointers(home["jobs"]).write(Pointer(
            job=JobId(name), host="login1", record_root=str(home["root"]), root_host=HOST.identity(),
            binary="/usr/bin/dunscaith", cluster="local", adapter="local", state="recorded", state_at=T0,
            supervised_at=None))


def _doctor(home: dict[str, Path]) -> Doctor:
    return Doctor(open_store=lambda: SqliteStore.open(home["root"], HOST),
                  integrity=lambda store: store.integrity_problem(),  # type: ignore[attr-defined]
                  pointers=FilePointers(home["jobs"]), residual=FileResidualList(home["residual"]),
                  here=HOST.identity())


def _digests(*folders: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in folders for p in sorted(folder.rglob("*")) if p.is_file()}


def _problems(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {f.subject: f.problem for f in report.problems}


def test_doctor_on_a_healthy_root_finds_nothing(home: dict[str, Path]) -> None:
    _record(home, "j1", "j2")
    assert _problems(_doctor(home)()) == {}


def test_doctor_reports_an_empty_store_and_changes_nothing(home: dict[str, Path]) -> None:
    _record(home, "j1")
    (home["root"] / "records.db").write_bytes(b"")
    before = _digests(home["root"], home["jobs"])
    problems = _problems(_doctor(home)())
    assert problems["store"].startswith(f"record store {home['root'] / 'records.db'} is empty")
    assert _digests(home["root"], home["jobs"]) == before


def test_doctor_reports_pointers_naming_jobs_the_store_does_not_know(home: dict[str, Path]) -> None:
    _record(home, "j1", "j2")
    for name in ("records.db", "records.db-wal", "records.db-shm"):
        (home["root"] / name).unlink(missing_ok=True)  # moved aside; a new store starts empty
    _record(home, "j3")
    problems = _problems(_doctor(home)())
    assert set(problems) == {"pointer j1", "pointer j2"}
    assert "which the store does not know" in problems["pointer j1"]


@pytest.mark.parametrize("content", [b"garbage\n", bytes(range(256)), b"x" * 200_000, None])
def test_doctor_lists_a_damaged_pointer(home: dict[str, Path], content: bytes | None) -> None:
    _record(home, "j1")
    if content is None:
        (home["jobs"] / "j9").mkdir()
    else:
        (home["jobs"] / "j9").write_bytes(content)
        (home["jobs"] / "j9").chmod(0o600)
    assert set(_problems(_doctor(home)())) == {"pointer j9"}


def test_doctor_lists_a_damaged_residual_entry(home: dict[str, Path]) -> None:
    _record(home, "j1")
    entry = home["residual"] / "j1" / "k1"
    entry.parent.mkdir(parents=True, mode=0o700)
    entry.write_bytes(b"\xff\xfe not json")
    entry.chmod(0o600)
    assert set(_problems(_doctor(home)())) == {"residual j1/k1"}


def test_doctor_names_the_job_of_a_zeroed_page(home: dict[str, Path]) -> None:
    with SqliteStore.open(home["root"], HOST) as store:
        for name in ("j1", "j2", "j3"):
            RecordJob(store, FakeClock(T0), _NoCrash())(JobSpec(JobId(name), "local", "local", ("p" * 900,)))
    with open(home["root"] / "records.db", "r+b") as f:
        f.seek(4096 * 2)
        f.write(b"\0" * 4096)
    problems = _problems(_doctor(home)())
    assert any(subject.startswith("job ") for subject in problems) or "store" in problems


def test_doctor_names_a_summary_that_disagrees_with_its_record_and_rebuilds_it_only_when_asked(
        home: dict[str, Path]) -> None:
    import sqlite3

    _record(home, "j1", "j2")
    conn = sqlite3.connect(home["root"] / "records.db")
    conn.execute("UPDATE summaries SET state = 'succeeded', settled = 1 WHERE job_id = "
                 "(SELECT id FROM jobs WHERE name = 'j2')")  # not the fold of j2's record any more
    conn.commit()
    conn.close()
    db = home["root"] / "records.db"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    problems = _problems(_doctor(home)())
    assert set(problems) == {"job j2"}
    assert "disagrees with its record (succeeded, the record says recorded)" in problems["job j2"]
    assert "--rebuild-summaries" in problems["job j2"]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # reported, not repaired
    assert _doctor(home).rebuild_summaries() == 2
    assert _problems(_doctor(home)()) == {}
    with SqliteStore.open(home["root"], HOST) as store:
        assert (store.summary(JobId("j2")).state, store.summary(JobId("j2")).settled) == ("recorded", False)
