"""The store's schema: made and migrated on open, under a lock; a newer one refused, never touched."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory

from dunscaith import adapters, domain
from dunscaith.adapters.store.sqlite.schema import HEAD, KNOWN_REVISIONS, alembic_config, migrations_dir
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import StoreError
from tests.expect import present
from tests.integration.store.conftest import OpenStore, raw, run_child

REPO = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_store_written_by_a_newer_schema_is_refused_naming_both_versions_and_left_as_it_was(open_store: OpenStore,
                                                                                              root: Path) -> None:
    store = open_store()
    store.create(JobId("job"), T0, "created", {})
    store.close()
    with raw(root / "records.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0042'")
    before = (root / "records.db").read_bytes()
    with pytest.raises(StoreError) as caught:
        open_store()
    message = str(caught.value)
    assert "newer dunscaith" in message and "schema 0042" in message and f"up to {HEAD}" in message
    assert str(root / "records.db") in message
    with raw(root / "records.db") as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [("0042",)]
    assert (root / "records.db").read_bytes() == before


def test_another_programs_sqlite_database_is_refused_and_not_migrated(open_store: OpenStore, root: Path) -> None:
    open_store().close()
    for name in ("records.db", "records.db-wal", "records.db-shm"):
        (root / name).unlink(missing_ok=True)
    with raw(root / "records.db") as conn:
        conn.execute("CREATE TABLE theirs (x)")
    with pytest.raises(StoreError, match="not a dunscaith record store"):
        open_store()
    with raw(root / "records.db") as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"theirs"}


def test_a_new_store_is_migrated_to_head_on_open(open_store: OpenStore, root: Path) -> None:
    open_store()
    with raw(root / "records.db") as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"jobs", "events", "alembic_version"} <= tables


def test_reopening_a_store_at_head_keeps_its_records(open_store: OpenStore) -> None:
    first = open_store()
    first.create(JobId("job"), T0, "created", {"a": 1})
    first.close()
    assert open_store().read(JobId("job")).events[0].data == {"a": 1}


@pytest.mark.slow
def test_processes_opening_a_new_store_at_once_all_succeed_and_migrate_it_once(root: Path) -> None:
    code = (
        "import pathlib; from dunscaith.adapters.host.system import SystemHost;"
        "from dunscaith.adapters.store.sqlite.store import SqliteStore;"
        f"SqliteStore.open(pathlib.Path({str(root)!r}), SystemHost()).close(); print('ok')"
    )
    children = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True) for _ in range(6)]
    results = [child.communicate(timeout=120) for child in children]
    assert [(child.returncode, out) for child, (out, _) in zip(children, results, strict=True)] == [(0, "ok\n")] * 6
    with raw(root / "records.db") as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]


def test_the_events_table_refuses_update_and_delete(open_store: OpenStore, root: Path) -> None:
    store = open_store()
    store.create(JobId("job"), T0, "created", {})
    with raw(root / "records.db") as conn:
        for statement in ("UPDATE events SET kind = 'x'", "DELETE FROM events"):
            with pytest.raises(Exception, match="append-only"):
                conn.execute(statement)
    assert store.read(JobId("job")).events[0].kind == "created"


def test_the_migrations_match_the_tables_alembic_check_finds_no_difference(open_store: OpenStore, root: Path) -> None:
    open_store().close()
    command.check(alembic_config(root / "records.db"))


def test_the_revisions_this_build_knows_are_exactly_those_in_migrations() -> None:
    script = ScriptDirectory.from_config(alembic_config())
    chain = [rev.revision for rev in script.walk_revisions()][::-1]
    assert tuple(chain) == KNOWN_REVISIONS
    assert script.get_current_head() == HEAD


def test_the_migrations_are_found_from_the_installed_package_in_this_repository() -> None:
    assert migrations_dir() == REPO / "migrations"
    assert (migrations_dir() / "env.py").is_file()
    for package in (domain, adapters):
        assert Path(present(package.__file__)).resolve().is_relative_to(REPO)


def test_the_alembic_command_line_finds_the_environment_through_pyproject(open_store: OpenStore, root: Path) -> None:
    open_store().close()
    result = run_child(
        "import sys; from alembic.config import main;"
        f"sys.argv = ['alembic', '-x', 'db={root / 'records.db'}', 'current']; main()",
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    assert f"{HEAD} (head)" in result.stdout


def test_a_store_of_schema_0001_gets_every_summary_folded_from_its_events_on_open(open_store: OpenStore,
                                                                                  root: Path) -> None:
    from dunscaith.domain.model.jobs import events as ev
    from dunscaith.domain.model.jobs.ids import JobId, Nonce
    from dunscaith.domain.model.jobs.record import StoreIdentity
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.model.jobs.state import fold
    from dunscaith.domain.model.jobs.summary import SummaryQuery, summarize

    store = open_store()
    for i in range(3):
        job = JobId(f"job-{i}")
        store.create(job, T0, *ev.encode(ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)),
                                                           StoreIdentity("sqlite", "x"))))
        for _ in range(i):
            store.append(job, T0, *ev.encode(ev.Submitting(store.summary(job).attempts + 1, Nonce("n"))))
    store.create(JobId("odd"), T0, "not-an-event", {})
    store.close()
    with raw(root / "records.db") as conn:  # as revision 0001 left it: no summaries, no snapshots
        conn.execute("DROP TABLE summaries")
        conn.execute("DROP TABLE snapshots")
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
    store = open_store()
    listed = {s.job: s for s in store.summaries(SummaryQuery())}
    assert set(listed) == {"job-0", "job-1", "job-2", "odd"}
    for i in range(3):
        job = JobId(f"job-{i}")
        assert listed[job] == summarize(fold(store.read(job)), i + 1, job)
    assert listed[JobId("odd")].problem == "unknown event kind 'not-an-event' (written by a newer dunscaith?)"
    store.append(JobId("job-2"), T0, *ev.encode(ev.Submitting(3, Nonce("n"))))  # carried on from the rebuild
    assert store.summary(JobId("job-2")).attempts == 3


def test_a_store_of_schema_0004_gains_the_sweep_columns_on_open_and_keeps_every_summary(open_store: OpenStore,
                                                                                       root: Path) -> None:
    from dunscaith.domain.model.jobs import events as ev
    from dunscaith.domain.model.jobs.record import StoreIdentity
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.model.jobs.state import fold
    from dunscaith.domain.model.jobs.summary import SummaryQuery, summarize
    from dunscaith.domain.model.jobs.sweeps import SweepMember

    where = StoreIdentity("sqlite", "x")
    plain = [JobId(f"job-{i}") for i in range(3)]
    store = open_store()
    for job in plain:
        store.create(job, T0, *ev.encode(ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)), where)))
    element = JobSpec(JobId("exp-4"), "local", "local", ("true",), member=SweepMember(JobId("exp"), 4, None))
    store.create(element.name, T0, *ev.encode(ev.JobRecorded.of(element, where)))
    store.close()
    with raw(root / "records.db") as conn:  # as revision 0004 left it: no sweep columns
        conn.execute("DROP INDEX ix_summaries_sweep")
        conn.execute("ALTER TABLE summaries DROP COLUMN sweep_index")
        conn.execute("ALTER TABLE summaries DROP COLUMN sweep")
        conn.execute("UPDATE alembic_version SET version_num = '0004'")
    store = open_store()
    listed = {s.job: s for s in store.summaries(SummaryQuery())}
    for job in [*plain, element.name]:
        assert listed[job] == summarize(fold(store.read(job)), 1, job)
    assert [(s.job, s.sweep, s.sweep_index) for s in store.summaries(SummaryQuery(sweep="exp"))] == [
        ("exp-4", "exp", 4)]
    assert all(listed[job].sweep is None for job in plain)
    with raw(root / "records.db") as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT job_id FROM summaries WHERE sweep = 'exp'").fetchall()
        assert any("ix_summaries_sweep" in str(step) for step in plan)
