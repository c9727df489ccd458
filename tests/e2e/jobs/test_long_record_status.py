"""``dunscaith status`` of a long record (folded from its snapshot), as the user sees it.

The record is built through the store's own port (as a supervisor appends): 1,100 events, so the
store keeps a snapshot of event 1,088 (every ``snapshot.EVERY``, 32) and status folds the 12 after it.
What it prints must be what the whole record says, and damage under the snapshot or after it is the
same one line as without snapshots, naming the event.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.spec import JobSpec
from tests.e2e.jobs.cli import Cli
from tests.e2e.jobs.test_bad_input import one_line

T0 = datetime(2026, 1, 1, tzinfo=UTC)
OID = ObjectId("1001")


def _long(cli: Cli, name: str = "long") -> None:
    story: list[ev.Event] = [
        ev.Submitting(1, Nonce("n")), ev.Created(1, OID), ev.Confirmed(1, OID), ev.Released(1, OID, "/o", "/e"),
        *(ev.Observed(1, OID, ("pending", "running")[i % 2], None, None, "") for i in range(1092)),
        ev.Observed(1, OID, "completed", 0, None, ""), ev.OutcomeReached("succeeded", "exit 0"), ev.Settled()]
    with SqliteStore.open(cli.root, SystemHost()) as store:
        job = JobId(name)
        with store.batch():
            store.create(job, T0, *ev.encode(ev.JobRecorded.of(JobSpec(job, "local", "local", ("true",)),
                                                                store.identity())))
            for n, event in enumerate(story, start=1):
                store.append(job, T0 + timedelta(seconds=n), *ev.encode(event))
        assert store.read_tail(job).after == 1100 - 1100 % snapshot.EVERY


def _damage(cli: Cli, seq: int, data: str) -> None:
    conn = sqlite3.connect(cli.root / "records.db")
    conn.execute("DROP TRIGGER IF EXISTS events_append_only_update")
    conn.execute("UPDATE events SET data = ? WHERE seq = ?", (data, seq))
    conn.commit()
    conn.close()


def test_status_of_a_long_record_shows_what_the_whole_record_says(cli: Cli) -> None:
    _long(cli)
    shown = cli.status("long")  # --json
    assert shown["state"] == "succeeded" and shown["settled"] and shown["attempts"][0]["stdout"] == "/o"
    done = cli.run("status", "long")
    assert done.returncode == 0 and done.stdout.startswith("long  succeeded"), done.stdout + done.stderr


@pytest.mark.parametrize("seq", [7, 1090], ids=["under-the-snapshot", "after-it"])
@pytest.mark.parametrize("data", ['{"state":', "[1]"])
def test_a_damaged_event_of_a_long_record_is_one_line_naming_it(cli: Cli, seq: int, data: str) -> None:
    _long(cli)
    _damage(cli, seq, data)
    line = one_line(cli.run("status", "long"))
    assert line.startswith(f"dunscaith: the record of job long does not read: damaged at event {seq}: "), line
