"""Issue 22 item 2: a full disk while a worker runs never turns its end into a false "failed".

The instance directory is on a real 2 MB tmpfs, filled while the worker runs. The wrapper keeps the
worker's outcome, notes the cause in its lock file's room (``remote status`` says "disk full"), retries
on a backoff, and writes the outcome once space returns; no staging file is ever left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.remote.conftest import DUNSCAITH, WORKER_PATH, Remote, wait_for
from tests.infra.tmpfs import SmallDisk, small_tmpfs

pytestmark = pytest.mark.slow


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    with small_tmpfs(tmp_path / "disk") as mounted:
        yield mounted


def _start(directory: Path) -> subprocess.Popen[bytes]:
    """A worker that waits for one line on its stdin, then writes to its stdout (a pipe: not the disk)."""
    return subprocess.Popen(
        [DUNSCAITH, "remote", "run", "--instance-dir", str(directory), *WORKER_PATH, "--",
         "sh", "-c", "read line; echo all-written; exit 0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _staging(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.startswith(".staging."))


def _blocked_on_outcome(remote: Remote, directory: Path) -> dict[str, object] | None:
    status = remote.status(directory)
    return status if status["blocked"] and status["blocked"]["file"] == "outcome.json" else None


def test_the_outcome_waits_for_space_is_shown_as_disk_full_and_is_written_when_space_returns(
        remote: Remote, disk: SmallDisk) -> None:
    directory = disk.path / "inst"
    wrapper = _start(directory)
    remote.instance(directory)
    disk.fill()
    assert wrapper.stdin is not None and wrapper.stdout is not None
    wrapper.stdin.write(b"go\n")
    wrapper.stdin.close()
    assert wrapper.stdout.readline() == b"all-written\n"  # the worker wrote all its output and exited 0

    status = wait_for(lambda: _blocked_on_outcome(remote, directory), "the outcome blocked on a full disk")
    assert (status["state"], status["live"], status["outcome"]) == ("running", True, None)
    note = status["blocked"]
    assert (note["errno"], note["reason"], note["exit_code"]) == (28, "No space left on device", 0)
    text = remote.cli("status", str(directory))
    assert "blocked: disk full: outcome.json not written yet (No space left on device, since " in text.stdout
    assert wrapper.poll() is None  # the owner stays: the worker's end is known to it alone
    assert _staging(directory) == []

    disk.free()
    assert wrapper.wait(timeout=60) == 0
    outcome = json.loads((directory / "outcome.json").read_bytes())
    assert (outcome["exit_code"], outcome["signal"], outcome["stdout_bytes"]) == (0, None, len(b"all-written\n"))
    done = remote.status(directory)
    assert (done["state"], done["blocked"]) == ("ended", None)
    assert _staging(directory) == []
    assert wrapper.stderr is not None
    said = wrapper.stderr.read().decode()
    assert "outcome.json cannot be written yet (No space left on device); kept" in said, said


def test_an_owner_killed_while_its_outcome_waits_leaves_the_cause_not_a_failure(remote: Remote,
                                                                              disk: SmallDisk) -> None:
    directory = disk.path / "inst"
    wrapper = _start(directory)
    remote.instance(directory)
    disk.fill()
    assert wrapper.stdin is not None and wrapper.stdout is not None
    wrapper.stdin.write(b"go\n")
    wrapper.stdin.close()
    assert wrapper.stdout.readline() == b"all-written\n"
    wait_for(lambda: _blocked_on_outcome(remote, directory), "the outcome blocked on a full disk")

    os.kill(wrapper.pid, signal.SIGKILL)
    wrapper.wait(timeout=30)
    status = remote.status(directory)
    assert (status["state"], status["live"], status["outcome"]) == ("lost", False, None)
    assert status["blocked"]["file"] == "outcome.json" and status["blocked"]["errno"] == 28
    assert _staging(directory) == []


def test_a_full_disk_before_the_start_starts_nothing_and_says_so_in_one_line(remote: Remote, disk: SmallDisk,
                                                                            tmp_path: Path) -> None:
    directory = disk.path / "inst"
    disk.fill()
    marker = tmp_path / "ran"
    done = remote.cli("run", "--instance-dir", str(directory), *WORKER_PATH, "--", "touch", str(marker))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0] and "nothing was started" in lines[0], lines
    assert not marker.exists()
    assert _staging(directory) == [] if directory.exists() else True


def test_terminate_on_a_full_disk_is_unrequested_with_its_cause_and_signals_nothing(remote: Remote,
                                                                                    disk: SmallDisk) -> None:
    directory = disk.path / "inst"
    worker = remote.run(directory, "sleep", "300")
    remote.instance(directory)
    disk.fill()
    done = remote.cli("terminate", str(directory), "--wait", "1")
    assert (done.returncode, done.stdout.strip()) == (6, "unrequested"), done.stderr
    assert done.stderr.strip() == (f"dunscaith: {directory / 'terminate.json'} cannot be written (No space left "
                                   "on device); nothing was requested or signalled")
    assert _staging(directory) == [] and worker.poll() is None
    disk.free()
    assert remote.terminate(directory, "--grace", "1") == (0, "confirmed")  # with room, as always
    worker.wait(timeout=30)


def test_terminate_after_the_worker_ended_while_its_outcome_waits_writes_nothing(remote: Remote,
                                                                                disk: SmallDisk) -> None:
    directory = disk.path / "inst"
    wrapper = _start(directory)
    remote.instance(directory)
    disk.fill()
    assert wrapper.stdin is not None and wrapper.stdout is not None
    wrapper.stdin.write(b"go\n")
    wrapper.stdin.close()
    wait_for(lambda: _blocked_on_outcome(remote, directory), "the outcome blocked on a full disk")
    assert remote.terminate(directory, "--wait", "1") == (6, "unrequested")
    assert not (directory / "terminate.json").exists()
    disk.free()
    assert wrapper.wait(timeout=60) == 0


def test_an_instance_directory_removed_while_the_outcome_waits_lets_the_wrapper_end(tmp_path: Path) -> None:
    """Its files can never be written once the directory is gone (a record root deleted, a test's folder
    cleared): the wrapper says so once and ends, instead of retrying for the rest of its life."""
    directory = tmp_path / "instance"
    proc = _start(directory)
    wait_for(lambda: (directory / "instance.json").exists(), "the instance published")
    for name in os.listdir(directory):
        path = directory / name
        if path.is_file():
            path.unlink()
    directory.rmdir()  # the lock file's open descriptor keeps the wrapper's lock; the name is gone
    _, err = proc.communicate(b"go\n", timeout=60)
    assert b"all-written" not in err and b"the instance directory is gone" in err, err
    assert err.count(b"the instance directory is gone") == 1, err
