"""The site lock: an exclusive flock and a holder file, with real processes holding it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dunscaith.adapters.site_lock.flock import FlockSiteLock
from dunscaith.ports.site_lock import SiteLockRefused

pytestmark = pytest.mark.slow  # real processes hold the lock

HOLD = """
import sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from dunscaith.adapters.site_lock.flock import FlockSiteLock
with FlockSiteLock(Path({state!r}), {host!r}).hold("mqss"):
    print("held", flush=True)
    time.sleep(60)
"""


def holder_process(state: Path, host: str) -> subprocess.Popen[str]:
    root = str(Path(__file__).resolve().parents[3] / "src")
    proc = subprocess.Popen([sys.executable, "-c", HOLD.format(root=root, state=str(state), host=host)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def refused(lock: FlockSiteLock, pattern: str) -> None:
    with pytest.raises(SiteLockRefused, match=pattern), lock.hold("mqss"):
        pass


def test_a_second_live_call_on_the_site_from_this_host_is_refused(tmp_path: Path) -> None:
    proc = holder_process(tmp_path, "h1")
    try:
        refused(FlockSiteLock(tmp_path, "h1"), rf"a live call on mqss runs \(pid {proc.pid} on h1")
    finally:
        proc.kill()
        proc.wait()


def test_a_holder_of_this_host_whose_process_has_ended_is_cleared(tmp_path: Path) -> None:
    proc = holder_process(tmp_path, "h1")
    proc.kill()
    proc.wait()
    assert (tmp_path / "mqss.holder").exists()
    with FlockSiteLock(tmp_path, "h1").hold("mqss") as holder:
        assert holder.pid == os.getpid()
    assert not (tmp_path / "mqss.holder").exists()


def test_a_holder_of_another_host_refuses_then_unlock_clears_it(tmp_path: Path) -> None:
    proc = holder_process(tmp_path, "other-host")
    proc.kill()
    proc.wait()
    lock = FlockSiteLock(tmp_path, "h1")
    refused(lock, r"held by host other-host.*unlock mqss --host other-host")
    with pytest.raises(SiteLockRefused, match="not wrong-host"):
        lock.unlock("mqss", "wrong-host")
    cleared = lock.unlock("mqss", "other-host")
    assert cleared is not None and cleared.host == "other-host"
    with lock.hold("mqss"):
        pass


def test_a_live_holder_of_this_host_with_a_granted_flock_means_no_working_flock(tmp_path: Path) -> None:
    # What a cluster file system does: the flock is granted although the holder's process runs.
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "mqss.holder").write_text(json.dumps(
            {"host": "h1", "pid": proc.pid, "started": "2026-01-01T00:00:00+00:00", "proc_start": ""}))
        refused(FlockSiteLock(tmp_path, "h1"), "flock does not work")
    finally:
        proc.kill()
        proc.wait()


def test_unlock_is_refused_while_a_call_holds_the_flock(tmp_path: Path) -> None:
    proc = holder_process(tmp_path, "h1")
    try:
        with pytest.raises(SiteLockRefused, match="runs"):
            FlockSiteLock(tmp_path, "h1").unlock("mqss", "h1")
    finally:
        proc.kill()
        proc.wait()


def test_a_holder_file_that_is_not_ours_refuses(tmp_path: Path) -> None:
    (tmp_path / "mqss.holder").write_text("rubbish")
    refused(FlockSiteLock(tmp_path, "h1"), "not a holder file")


def test_the_lock_folder_is_private(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with FlockSiteLock(state, "h1").hold("mqss"):
        assert oct(os.stat(state).st_mode & 0o777) == "0o700"
        assert oct(os.stat(state / "mqss.lock").st_mode & 0o777) == "0o600"
