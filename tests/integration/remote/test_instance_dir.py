"""The instance directory against the real filesystem: staging leftovers, planted links, liveness."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles, NotAnInstance

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")

pytestmark = pytest.mark.slow


def _run(d: Path, *argv: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([DUNSCAITH, "remote", "run", "--instance-dir", str(d), "--env", "PATH=/usr/bin:/bin",
                             "--", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _until(condition: Callable[[], bool], proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 15
    while not condition():
        assert proc.poll() is None, f"the wrapper ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_a_staging_file_left_by_a_killed_writer_blocks_nothing(tmp_path: Path) -> None:
    d = tmp_path / "inst"
    d.mkdir(mode=0o700)
    (d / ".staging.outcome.json.1.abcdef").write_bytes(b'{"half')
    proc = _run(d, "true")
    assert proc.wait(timeout=30) == 0
    live, records = DirectoryInstanceFiles(d).read()
    assert not live and records.outcome is not None and records.outcome.exit_code == 0


def test_a_symlink_planted_as_the_request_is_refused_unfollowed_and_removed(tmp_path: Path) -> None:
    d = tmp_path / "inst"
    target = tmp_path / "elsewhere.json"
    target.write_text("precious")
    gate = tmp_path / "gate"
    gate.mkdir()
    proc = _run(d, "sh", "-c", f"while [ ! -e {gate}/go ]; do sleep 0.02; done")
    try:
        files = DirectoryInstanceFiles(d)
        _until((d / "instance.json").exists, proc, "instance.json")
        os.symlink(target, d / "terminate.json")
        _until((d / "refused.1.json").exists, proc, "the refusal")
        refusal = json.loads((d / "refused.1.json").read_bytes())
        assert refusal["request"] is None and refusal["reason"].startswith("unreadable request")
        _until(lambda: not (d / "terminate.json").is_symlink(), proc, "the planted link to go")
        assert target.read_text() == "precious"
        live, records = files.read()
        assert live and records.request is None and len(records.refused) == 1
    finally:
        (gate / "go").touch()
        proc.wait(timeout=30)


def test_liveness_is_the_lock_not_a_pid(tmp_path: Path) -> None:
    d = tmp_path / "inst"
    proc = _run(d, "true")
    assert proc.wait(timeout=30) == 0
    instance = json.loads((d / "instance.json").read_bytes())
    assert instance["wrapper_pid"] == proc.pid
    live, _ = DirectoryInstanceFiles(d).read()
    assert live is False


def test_a_directory_without_lock_or_launch_is_no_instance(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("someone else's")
    with pytest.raises(NotAnInstance):
        DirectoryInstanceFiles(tmp_path).read()
    with pytest.raises(NotAnInstance):
        DirectoryInstanceFiles(tmp_path / "missing").read()


def test_an_empty_directory_is_an_instance_not_yet_begun(tmp_path: Path) -> None:
    live, records = DirectoryInstanceFiles(tmp_path).read()
    assert not live and records.launching is None


@pytest.mark.parametrize("plant", ["fifo", "directory", "full directory"])
def test_a_request_name_taken_by_no_file_is_refused_once_and_the_wrapper_carries_on(
        tmp_path: Path, plant: str) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = _run(d, "sh", "-c", f"while [ ! -e {gate}/go ]; do sleep 0.02; done; echo finished")
    try:
        _until((d / "instance.json").exists, proc, "instance.json")
        if plant == "fifo":
            os.mkfifo(d / "terminate.json")
        else:
            (d / "terminate.json").mkdir()
            if plant == "full directory":
                (d / "terminate.json" / "x").write_text("x")
        _until((d / "refused.1.json").exists, proc, "the refusal")
        assert "not a regular file" in json.loads((d / "refused.1.json").read_bytes())["reason"]
    finally:
        (gate / "go").touch()
    out, _ = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, b"finished\n")
    assert not (d / "refused.2.json").exists()
