"""The one instance-directory reader, as `remote status` and the local scheduler both use it."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from blake3 import blake3

from dunscaith.adapters.durable.lock import FlockLock, is_held
from dunscaith.adapters.durable.publish import publish
from dunscaith.adapters.instance_dir import reader
from dunscaith.adapters.instance_dir.reader import NotAnInstance, read_instance_dir
from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles
from dunscaith.adapters.scheduler.local.instance import read_instance
from dunscaith.domain.model.remote.control import (
    INSTANCE,
    LAUNCHING,
    LOCK,
    OUTCOME,
    REQUEST,
    ControlError,
    Instance,
    InstanceId,
    Launching,
    Outcome,
    encode,
)
from dunscaith.domain.model.remote.state import State

EMPTY_DIGEST = "blake3:" + blake3(b"").hexdigest()


def _begun(tmp_path: Path) -> Path:
    d = tmp_path / "inst"
    d.mkdir(mode=0o700)
    (d / LOCK).touch()
    return d


def test_a_missing_directory_is_no_instance_for_status_and_not_yet_begun_for_the_scheduler(tmp_path: Path) -> None:
    with pytest.raises(NotAnInstance, match="no such directory"):
        DirectoryInstanceFiles(tmp_path / "missing").read()
    reading = read_instance(tmp_path / "missing")
    assert (reading.live, reading.state) == (False, State.EMPTY)


def test_a_file_in_place_of_the_directory_is_no_instance(tmp_path: Path) -> None:
    (tmp_path / "inst").write_text("x")
    with pytest.raises(NotAnInstance, match="not a directory"):
        read_instance_dir(tmp_path / "inst", missing_is_empty=True)


def test_the_scheduler_refuses_a_directory_no_wrapper_wrote_as_status_does(tmp_path: Path) -> None:
    d = tmp_path / "inst"
    d.mkdir()
    (d / "notes.txt").write_text("x")
    with pytest.raises(ControlError, match="not an instance directory"):
        read_instance(d)


def test_a_fifo_planted_as_the_request_is_refused_without_blocking_the_reader(tmp_path: Path) -> None:
    d = _begun(tmp_path)
    os.mkfifo(d / REQUEST)
    with pytest.raises(ControlError, match=f"{REQUEST}: not a regular file"):
        DirectoryInstanceFiles(d).read()
    with pytest.raises(ControlError, match=f"{REQUEST}: not a regular file"):
        read_instance(d)


def test_a_link_planted_as_a_control_file_is_refused_not_followed(tmp_path: Path) -> None:
    d = _begun(tmp_path)
    (tmp_path / "elsewhere.json").write_text("{}")
    (d / REQUEST).symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ControlError, match="symbolic link"):
        read_instance(d)


def _launched(tmp_path: Path) -> tuple[Path, FlockLock]:
    """An instance directory as a live wrapper leaves it once it has claimed it and recorded its launch."""
    d = tmp_path / "inst"
    d.mkdir(mode=0o700)
    lock = FlockLock(d / LOCK)
    lock.acquire()
    at = datetime(2026, 12, 3, tzinfo=UTC)
    publish(d, LAUNCHING, encode(Launching("n1", "login1", os.getpid(), ("true",), "/", (), at)))
    return d, lock


def test_a_wrapper_that_claims_its_directory_between_the_probe_and_the_listing_reads_live_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The probe saw no lock (the wrapper had not claimed the directory yet); the listing then found its
    # launching.json. Read as "lost", a local job just released was reported failed ("the process owner
    # ended without recording an outcome") on a loaded host.
    d, lock = _launched(tmp_path)
    probes = iter([False])
    monkeypatch.setattr(reader, "is_held", lambda path: next(probes, is_held(path)))
    reading = read_instance(d)
    assert (reading.live, reading.state) == (True, State.LAUNCHING)
    lock.release()


def test_a_wrapper_that_ended_between_the_two_readings_reads_ended_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d, lock = _launched(tmp_path)
    at = datetime(2026, 12, 3, tzinfo=UTC)

    def probe(path: Path) -> bool:
        if not (d / OUTCOME).exists() and calls:
            # the second probe: the wrapper ran, wrote its outcome and released its lock since the first
            publish(d, INSTANCE, encode(Instance("n1", "login1", os.getpid(), 1, 1, at)))
            ended = Outcome(InstanceId("login1", "n1", os.getpid(), 1), 0, None, 0, EMPTY_DIGEST, at)
            publish(d, OUTCOME, encode(ended))
            lock.release()
        calls.append(path)
        return False if len(calls) == 1 else is_held(path)

    calls: list[Path] = []
    monkeypatch.setattr(reader, "is_held", probe)
    reading = read_instance(d)
    assert (reading.live, reading.state) == (False, State.ENDED)


def test_a_wrapper_killed_without_an_outcome_still_reads_lost(tmp_path: Path) -> None:
    d, lock = _launched(tmp_path)
    lock.release()  # as kill -9 of the wrapper drops it
    reading = read_instance(d)
    assert (reading.live, reading.state) == (False, State.LOST)
