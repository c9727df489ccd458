import subprocess
import sys
from pathlib import Path

import pytest

from dunscaith.adapters.durable.lock import FlockLock, LockHeld, is_held
from tests.expect import present


def test_a_second_holder_is_refused_and_the_first_release_frees_it(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    first = FlockLock(path)
    first.acquire()
    assert is_held(path)
    with pytest.raises(LockHeld):
        FlockLock(path).acquire()
    first.release()
    assert not is_held(path)
    with FlockLock(path):
        assert is_held(path)


def test_a_missing_lock_file_is_not_held(tmp_path: Path) -> None:
    assert not is_held(tmp_path / "absent")


def test_the_kernel_releases_the_lock_of_a_killed_holder(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    code = (
        "import sys, pathlib; from dunscaith.adapters.durable.lock import FlockLock;"
        f"FlockLock(pathlib.Path({str(path)!r})).acquire(); print('held', flush=True); sys.stdin.read()"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert present(proc.stdout).readline() == "held\n"
    assert is_held(path)
    proc.kill()
    proc.wait()
    assert not is_held(path)


def test_a_lock_path_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "lock").symlink_to(tmp_path / "target")
    with pytest.raises(OSError):
        FlockLock(tmp_path / "lock").acquire()
