"""The one instance-directory reader, as `remote status` and the local scheduler both use it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dunscaith.adapters.instance_dir.reader import NotAnInstance, read_instance_dir
from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles
from dunscaith.adapters.scheduler.local.instance import read_instance
from dunscaith.domain.model.remote.control import LOCK, REQUEST, ControlError
from dunscaith.domain.model.remote.state import State


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
