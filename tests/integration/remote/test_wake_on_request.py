"""The wrapper sleeps while nothing happens and a request wakes it; without a notification it still answers."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dunscaith.adapters.process.directory_watch import FALLBACK_POLL_SECONDS, Polling, watch_directory
from tests.e2e.remote.conftest import DUNSCAITH, alive

pytestmark = pytest.mark.slow

# (select, pselect6) by machine, and the index of their timeout argument in /proc/PID/syscall
_SELECT_SYSCALLS = {"x86_64": (23, 270), "aarch64": (None, 72)}
_TIMEOUT_ARG = 5


def _until(condition: Callable[[], object], what: str) -> object:
    deadline = time.monotonic() + 15
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return value


def _readable(fd: int | None) -> bool:
    assert fd is not None
    return bool(select.select([fd], [], [], 0)[0])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_name_linked_into_the_directory_makes_the_watch_readable(tmp_path: Path) -> None:
    watch = watch_directory(tmp_path)
    try:
        assert watch.poll_seconds is None
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "x").write_text("a file in a subfolder is no news")
        staged = tmp_path / ".staging.terminate.json.1.ab"
        staged.write_text("{}")
        watch.drain()
        assert not _readable(watch.fileno())
        os.link(staged, tmp_path / "terminate.json")  # how a request is published
        assert _readable(watch.fileno())
        watch.drain()
        assert not _readable(watch.fileno())
        os.rename(tmp_path / "elsewhere" / "x", tmp_path / "moved-in")
        assert _readable(watch.fileno())
    finally:
        watch.close()


def test_the_fallback_asks_to_be_polled() -> None:
    assert Polling().fileno() is None and Polling().poll_seconds == FALLBACK_POLL_SECONDS


@pytest.mark.skipif(platform.machine() not in _SELECT_SYSCALLS or not os.path.exists("/proc/self/syscall"),
                    reason="reads the blocking system call from /proc on x86_64 and aarch64 Linux")
def test_an_idle_wrapper_waits_without_a_timeout_and_a_request_still_wakes_it(tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = subprocess.Popen([DUNSCAITH, "remote", "run", "--instance-dir", str(d), "--env", "PATH=/usr/bin:/bin",
                             "--", "sh", "-c", f"while [ ! -e {gate}/go ]; do sleep 0.05; done"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _until((d / "instance.json").exists, "instance.json")
        pid = json.loads((d / "instance.json").read_bytes())["wrapper_pid"]

        def main_thread_in_select_without_timeout() -> bool:
            fields = Path(f"/proc/{pid}/task/{pid}/syscall").read_text().split()
            return (fields[0].isdigit() and int(fields[0]) in _SELECT_SYSCALLS[platform.machine()]
                    and int(fields[_TIMEOUT_ARG], 16) == 0)

        # The first WATCH_AFTER of a job's life the loop looks every EARLY_POLL; then it must sleep for good.
        _until(main_thread_in_select_without_timeout, "the wrapper's loop to wait without a timeout (it polls)")
        done = subprocess.run([DUNSCAITH, "remote", "terminate", str(d), "--grace", "5", "--wait", "30"],
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout.strip()) == (0, "confirmed")
    finally:
        (gate / "go").touch()
        proc.communicate(timeout=60)
    assert json.loads((d / "outcome.json").read_bytes())["signal"] == 15


FORCED_POLLING = """
import sys
from pathlib import Path
from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.process.directory_watch import polling
from dunscaith.adapters.process.wrapper import LaunchSpec, PosixWrapper
wrapper = PosixWrapper(Path(sys.argv[1]), SystemClock(), watch=polling)
wrapper.claim()
sys.exit(wrapper.run(LaunchSpec(tuple(sys.argv[2:]), {"PATH": "/usr/bin:/bin"}, "/")))
"""


def test_without_notifications_a_request_is_still_answered(tmp_path: Path) -> None:
    d = tmp_path / "inst"
    proc = subprocess.Popen([sys.executable, "-c", FORCED_POLLING, str(d), "sleep", "1000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _until((d / "instance.json").exists, "instance.json")
        worker = json.loads((d / "instance.json").read_bytes())["worker_pid"]
        done = subprocess.run([DUNSCAITH, "remote", "terminate", str(d), "--grace", "0", "--wait", "30"],
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout.strip()) == (0, "confirmed")
        assert proc.wait(timeout=30) == 128 + 15
        assert not alive(worker)
    finally:
        if proc.poll() is None:
            with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
                os.killpg(json.loads((d / "instance.json").read_bytes())["process_group"], signal.SIGKILL)
            proc.kill()
        proc.communicate(timeout=30)
