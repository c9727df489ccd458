"""Issue 22 items 2 and 3, as a user meets them: the record root on a real 2 MB tmpfs, filled while a
job runs. The job wrote all its output and exits 0 on the full disk; it is never recorded failed:
``status`` reads the full root (no HOST written, no staging file), its live view says "disk full",
and once space returns the outcome the process owner kept is the job's: succeeded."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli, await_condition
from tests.infra.tmpfs import SmallDisk, small_tmpfs

pytestmark = pytest.mark.slow


@pytest.fixture
def disk(cli: Cli) -> Iterator[SmallDisk]:
    with small_tmpfs(cli.tmp / "disk") as mounted:
        yield mounted


def _object_dir(root: Path) -> Path | None:
    found = list((root / "local-scheduler").glob("*/object.json"))
    return found[0].parent if found else None


def _staging(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob(".staging.*"))


def _note(directory: Path) -> dict[str, object] | None:
    text = (directory / "instance" / "lock").read_bytes().strip()
    return json.loads(text) if text else None


def _await_recorded_running(cli: Cli, name: str, env: dict[str, str]) -> None:
    """The supervisor records the object running a moment after the worker's first output: the disk is
    filled only after that, or the record would stay pending behind the full disk."""
    def recorded_running() -> bool:
        shown = cli.run("status", name, "--json", env=env)
        return shown.returncode == 0 and json.loads(shown.stdout).get("state") == "running"
    await_condition(recorded_running, 60, f"{name} recorded running")


def test_a_job_that_ends_on_a_full_disk_is_not_failed_and_its_outcome_returns_with_the_space(
        cli: Cli, disk: SmallDisk) -> None:
    root = disk.path / "records"
    gate = cli.tmp / "gate"
    env = {"DUNSCAITH_RECORDS__ROOT": str(root)}
    name = "full1"
    supervisor = cli.start("submit", "--name", name, "--", "sh", "-c",
                           f"echo all of it; while [ ! -e {gate} ]; do sleep 0.05; done", env=env)
    await_condition(lambda: (d := _object_dir(root)) is not None and (d / "stdout").exists()
                    and (d / "stdout").read_bytes() == b"all of it\n", 60, "the job's output")
    directory = _object_dir(root)
    assert directory is not None
    _await_recorded_running(cli, name, env)
    disk.fill()
    gate.touch()  # the worker exits 0, on the full disk
    await_condition(lambda: _note(directory) is not None, 60, "the process owner's note")
    note = _note(directory)
    assert note is not None and (note["file"], note["errno"], note["exit_code"]) == ("outcome.json", 28, 0)

    os.kill(supervisor.pid, signal.SIGKILL)  # Unattended: status asks the scheduler, its live view
    supervisor.communicate(timeout=30)
    shown = cli.run("status", "full1", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "live: running (" in shown.stdout and ": disk full: the worker ended with exit code 0; its outcome is " \
        "kept by the process owner" in shown.stdout, shown.stdout
    assert "HOST" not in shown.stderr
    listed = cli.run("list", env=env)
    assert listed.returncode == 0 and "full1" in listed.stdout, listed.stderr
    assert _staging(root) == []

    disk.free()
    await_condition(lambda: (directory / "instance" / "outcome.json").exists(), 60, "the outcome, written late")
    carried = cli.run("supervise", "full1", env=env)
    assert carried.returncode == 0, (carried.stdout, carried.stderr)
    assert "outcome: succeeded" in carried.stderr + carried.stdout
    final = cli.run("status", "full1", "--json", env=env)
    assert final.returncode == 0 and json.loads(final.stdout)["state"] == "succeeded", final.stdout
    assert _staging(root) == []


def test_a_supervisor_that_watches_through_the_full_disk_records_the_real_end(cli: Cli, disk: SmallDisk) -> None:
    root = disk.path / "records"
    gate = cli.tmp / "gate"
    env = {"DUNSCAITH_RECORDS__ROOT": str(root)}
    name = "full2"
    supervisor = cli.start("submit", "--name", name, "--", "sh", "-c",
                           f"echo all of it; while [ ! -e {gate} ]; do sleep 0.05; done", env=env)
    await_condition(lambda: (d := _object_dir(root)) is not None and (d / "stdout").exists()
                    and (d / "stdout").read_bytes() == b"all of it\n", 60, "the job's output")
    directory = _object_dir(root)
    assert directory is not None
    _await_recorded_running(cli, name, env)
    disk.fill()
    gate.touch()
    await_condition(lambda: _note(directory) is not None, 60, "the process owner's note")
    shown = cli.run("status", "full2", env=env)  # a supervised job on the full root still reads
    assert shown.returncode == 0 and "full2  running" in shown.stdout, (shown.stdout, shown.stderr)

    disk.free()
    out, err = supervisor.communicate(timeout=120)
    assert supervisor.returncode == 0, (out, err)
    assert "outcome: succeeded" in out + err and "failed" not in out + err
    assert _staging(root) == []


def test_an_owner_killed_before_it_could_write_the_outcome_escalates_with_the_cause(cli: Cli,
                                                                                   disk: SmallDisk) -> None:
    root = disk.path / "records"
    gate = cli.tmp / "gate"
    env = {"DUNSCAITH_RECORDS__ROOT": str(root)}
    name = "full3"
    supervisor = cli.start("submit", "--name", name, "--", "sh", "-c",
                           f"echo all of it; while [ ! -e {gate} ]; do sleep 0.05; done", env=env)
    await_condition(lambda: (d := _object_dir(root)) is not None and (d / "stdout").exists()
                    and (d / "stdout").read_bytes() == b"all of it\n", 60, "the job's output")
    directory = _object_dir(root)
    assert directory is not None
    _await_recorded_running(cli, name, env)
    disk.fill()
    gate.touch()
    await_condition(lambda: _note(directory) is not None, 60, "the process owner's note")
    os.kill(supervisor.pid, signal.SIGKILL)
    supervisor.communicate(timeout=30)
    wrapper = json.loads((directory / "instance" / "instance.json").read_bytes())["wrapper_pid"]
    os.kill(wrapper, signal.SIGKILL)  # its end, known to it alone, is lost with it

    disk.free()
    carried = cli.run("supervise", "full3", env=env)
    said = carried.stdout + carried.stderr
    assert carried.returncode == 1, said
    assert "outcome: escalated (attempt 1: disk full: the outcome is not known: the process owner could not " \
           "write outcome.json (No space left on device" in said, said
    assert "check its output, and decide)" in said, said
    assert "attempt 2" not in said  # never run again: it may have succeeded


# --- issue 38 item 3: reads on a full or read-only root, without a lock, writing nothing -------------------

def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


@pytest.mark.parametrize("no_room", ["full", "read-only"])
def test_list_status_and_events_read_a_full_or_read_only_root_without_a_lock_and_write_nothing(
        cli: Cli, disk: SmallDisk, no_room: str) -> None:
    root = disk.path / "records"
    env = {"DUNSCAITH_RECORDS__ROOT": str(root)}
    done = cli.run("submit", "--name", "seen", "--", "true", env=env)
    assert done.returncode == 0, done.stderr
    if no_room == "full":
        disk.fill()
    before = _files(root)
    try:
        if no_room == "read-only":
            disk.read_only()
        notice = (f"dunscaith: read without a lock: the record root is {no_room}; what is shown may be a moment "
                  "old, and nothing can be recorded there now\n")
        # the lean path (list, status) and typer's (list --state, events)
        for args in (["list"], ["status", "seen"], ["list", "--state", "succeeded"], ["events", "seen"]):
            shown = cli.run(*args, env=env)
            assert shown.returncode == 0 and shown.stderr == notice, (args, shown.stderr)
            assert "seen" in shown.stdout and ("succeeded" in shown.stdout or args[0] == "events"), shown.stdout
        as_json = cli.run("status", "seen", "--json", env=env)
        assert as_json.returncode == 0 and json.loads(as_json.stdout)["state"] == "succeeded"
        refused = cli.run("submit", "--name", "more", "--", "true", env=env)
        assert refused.returncode == 2 and "nothing can be recorded now" in refused.stderr, refused.stderr
        assert _files(root) == before  # no -shm, no -wal, no lock file: nothing written
    finally:
        disk.read_only(False)
    disk.free()
    again = cli.run("list", env=env)
    assert again.returncode == 0 and again.stderr == "" and "seen" in again.stdout
