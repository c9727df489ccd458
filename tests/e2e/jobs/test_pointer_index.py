"""The index of pointers not settled, through the real console script: what the notice, status and list
read instead of every pointer, and what a crash between its steps leaves for the next command."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dunscaith.adapters.pointers.files import FilePointers
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from tests.e2e.jobs.cli import Cli


def _jobs(cli: Cli) -> Path:
    return cli.tmp / "home" / ".config" / "dunscaith" / "jobs"


def _entries(cli: Cli) -> list[str]:
    index = _jobs(cli) / ".unsettled"
    return sorted(n for n in (p.name for p in index.iterdir()) if not n.startswith(".")) if index.exists() else []


def _far(cli: Cli, job: str = "far", state: str = "running") -> None:
    """Another login node's job, its pointer written through the port (so indexed), no supervisor seen."""
    old = datetime.now(UTC) - timedelta(hours=1)
    FilePointers(_jobs(cli)).write(Pointer(JobId(job), "login2", "/var/tmp/dunscaith-x",
                                           HostIdentity("f" * 32, "login2"), "/opt/dunscaith/bin/dunscaith",
                                           "local", "local", state, old, old))


def test_a_settled_job_leaves_the_index_and_a_job_of_another_host_is_still_noticed(cli: Cli) -> None:
    done = cli.run("submit", "--name", "done", "--", "true")
    assert done.returncode == 0, done.stderr
    assert json.loads((_jobs(cli) / "done").read_text())["state"] == "succeeded"
    assert _entries(cli) == []  # its entry went once its pointer said succeeded
    _far(cli)
    assert _entries(cli) == ["far"]
    status = cli.run("status", "done")  # another command: the notice reads the index
    assert status.returncode == 0, status.stderr
    assert "job far on host login2 looks Unattended" in status.stderr
    assert "reattach with: dunscaith supervise far (it runs on login2)" in status.stderr


def test_a_damaged_pointer_in_the_index_is_reported_by_the_notice_of_other_commands(cli: Cli) -> None:
    assert cli.run("submit", "--name", "done", "--", "true").returncode == 0
    _far(cli)
    (_jobs(cli) / "far").write_bytes(b"\x00garbage")
    status = cli.run("status", "done")
    assert status.returncode == 0, status.stderr
    assert "the pointer of job far is damaged" in status.stderr
    listed = cli.run("list")
    assert "far  damaged pointer: the pointer of job far is damaged" in listed.stdout
    assert listed.stderr.count("pointer of job far is damaged") == 0  # said once, in the list itself
    doctor = cli.run("doctor")
    assert doctor.returncode == 1 and "pointer far" in doctor.stdout


def test_pointers_an_older_dunscaith_wrote_are_read_whole_once_then_from_the_index(cli: Cli) -> None:
    cli.pointer_of_another_host("old-far", "running")  # written as a file: no index yet
    cli.pointer_of_another_host("old-done", "succeeded")
    _jobs(cli).chmod(0o700)  # as dunscaith made it
    first = cli.run("list")
    assert "old-far  running  on host login2 (from its pointer; looks Unattended)" in first.stdout
    assert "old-done" not in first.stdout  # settled, on another host: list --all shows it
    assert _entries(cli) == ["old-far"] and (_jobs(cli) / ".unsettled" / ".built").exists()
    assert "old-done  succeeded  on host login2" in cli.run("list", "--all").stdout
    assert "job old-far on host login2 looks Unattended" in cli.run("list").stderr


def test_a_crash_after_the_settled_pointer_before_its_entry_went_is_read_right_and_cleaned(cli: Cli) -> None:
    crashed = cli.run("submit", "--name", "cut", "--", "true", DUNSCAITH_TEST_CRASH_AT="pointer-settled")
    assert crashed.returncode == -9, crashed.stderr
    assert json.loads((_jobs(cli) / "cut").read_text())["state"] == "succeeded"
    assert _entries(cli) == ["cut"]  # the stale entry the kill left
    listed = cli.run("list")
    assert listed.returncode == 0, listed.stderr
    assert "looks Unattended" not in listed.stderr and "damaged" not in listed.stdout + listed.stderr
    assert _entries(cli) == []  # this host wrote the pointer: its reader removed the stale entry
    assert cli.run("doctor").returncode == 0


def test_a_crash_between_the_entry_and_the_first_pointer_is_read_right_and_doctor_repairs_it(cli: Cli) -> None:
    crashed = cli.run("submit", "--name", "half", "--", "true", DUNSCAITH_TEST_CRASH_AT="pointer-indexed")
    assert crashed.returncode == -9, crashed.stderr
    assert not (_jobs(cli) / "half").exists() and _entries(cli) == ["half"]
    listed = cli.run("list")
    assert listed.returncode == 0, listed.stderr
    assert "damaged" not in listed.stdout + listed.stderr  # an entry with no pointer is passed over
    assert "job half is Unattended" in listed.stderr  # the record here says so, exactly
    doctor = cli.run("doctor")
    assert doctor.returncode == 1 and "pointer half" in doctor.stdout and "stale entry" in doctor.stdout
    repaired = cli.run("doctor", "--rebuild-index")
    assert "1 entry of the index of pointers added or removed" in repaired.stderr
    assert _entries(cli) == []


def test_doctor_finds_a_pointer_of_this_host_missing_from_the_index_and_adds_it(cli: Cli) -> None:
    crashed = cli.run("submit", "--name", "lost", "--", "true", DUNSCAITH_TEST_CRASH_AT="pointer-indexed")
    assert crashed.returncode == -9
    supervised = cli.run("supervise", "lost")  # writes its pointer; the job ends: settled
    assert supervised.returncode == 0, supervised.stderr
    pointer = json.loads((_jobs(cli) / "lost").read_text())
    pointer["state"] = "running"  # as a pointer written before the index, never settled since
    (_jobs(cli) / "lost").write_text(json.dumps(pointer))
    assert _entries(cli) == []
    doctor = cli.run("doctor")
    assert doctor.returncode == 1 and "missing from the index" in doctor.stdout
    assert cli.run("doctor", "--rebuild-index").returncode == 0
    assert _entries(cli) == ["lost"]


def test_prune_removes_the_job_s_entry_with_its_pointer(cli: Cli) -> None:
    assert cli.run("submit", "--name", "old", "--", "true").returncode == 0
    index = _jobs(cli) / ".unsettled"
    (index / "old").write_bytes((index / ".built").read_bytes() or b"{}")  # an entry a crash left
    done = cli.run("prune", "old")
    assert done.returncode == 0, done.stderr
    assert not (_jobs(cli) / "old").exists() and _entries(cli) == []
