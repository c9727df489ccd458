"""read_private: the one no-follow private read every adapter uses; each refusal names what it saw."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dunscaith.adapters.durable.liveness import pid_alive, process_start
from dunscaith.adapters.durable.private_read import UnsafeFile, read_private, read_private_stat


def test_reads_a_file_of_yours_within_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    data, st = read_private_stat(path, 10)
    assert data == b"x" * 10 and st.st_ino == path.stat().st_ino


def test_absence_is_left_to_the_caller(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_private(tmp_path / "missing", 10)


def test_a_symlink_is_refused_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"secret")
    (tmp_path / "f").symlink_to(tmp_path / "real")
    with pytest.raises(UnsafeFile, match="symbolic link") as caught:
        read_private(tmp_path / "f", 100)
    assert caught.value.reason == "it is a symbolic link" and "secret" not in str(caught.value)


def test_a_planted_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f")  # no writer: a blocking open would never return
    with pytest.raises(UnsafeFile, match="not a regular file"):
        read_private(tmp_path / "f", 100)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").mkdir()
    with pytest.raises(UnsafeFile, match="not a regular file"):
        read_private(tmp_path / "f", 100)


def test_a_file_over_its_limit_is_refused_not_cut_short(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 11)
    with pytest.raises(UnsafeFile, match="11 bytes, more than the 10"):
        read_private(tmp_path / "f", 10)


def test_an_unreadable_file_is_an_oserror_for_callers_that_catch_those(tmp_path: Path) -> None:
    (tmp_path / "f").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        read_private(tmp_path / "f", 10)


def test_a_file_open_to_others_is_refused_only_where_asked(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"TOKEN=x")
    os.chmod(path, 0o640)
    assert read_private(path, 100) == b"TOKEN=x"
    with pytest.raises(UnsafeFile, match="mode 0640 lets others read or change it"):
        read_private(path, 100, closed_to_others=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file owned by someone else")
def test_a_file_of_another_user_is_refused_unless_the_caller_reads_others(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x")
    os.chown(path, 65534, 65534)
    with pytest.raises(UnsafeFile, match="owned by uid 65534, not by you"):
        read_private(path, 10)
    assert read_private(path, 10, owned=False) == b"x"


def test_this_process_is_alive_and_is_itself_by_its_start_time() -> None:
    assert pid_alive(os.getpid())
    assert pid_alive(os.getpid(), process_start(os.getpid()))


def test_a_reaped_child_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not pid_alive(child.pid)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc for start times")
def test_a_pid_reused_by_another_process_is_not_the_recorded_one() -> None:
    assert not pid_alive(os.getpid(), "1")  # the recorded start time is not this process's
