"""Real `dunscaith remote` processes for the e2e tests, and the clean-up of every group they start."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")
WORKER_PATH = ["--env", "PATH=/usr/bin:/bin"]


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def process_state(pid: int) -> str | None:
    """The kernel's one-letter state of ``pid`` (Z: exited, unreaped), or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def alive(pid: int) -> bool:
    return process_state(pid) not in (None, "Z", "X")


def read_json(path: Path) -> Any:
    return json.loads(path.read_bytes())


class Remote:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def run(self, directory: Path, *argv: str, cwd: Path | None = None, stdout: Any = subprocess.PIPE,
            extra: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
        cmd = [DUNSCAITH, "remote", "run", "--instance-dir", str(directory), *WORKER_PATH, *extra]
        if cwd is not None:
            cmd += ["--cwd", str(cwd)]
        proc = subprocess.Popen([*cmd, "--", *argv], stdout=stdout, stderr=subprocess.PIPE)
        self.started.append((proc, directory))
        return proc

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([DUNSCAITH, "remote", *args], capture_output=True, text=True, timeout=60)

    def status(self, directory: Path) -> dict[str, Any]:
        done = self.cli("status", str(directory), "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    def terminate(self, directory: Path, *args: str) -> tuple[int, str]:
        done = self.cli("terminate", str(directory), *args)
        assert done.stderr == "", done.stderr
        return done.returncode, done.stdout.strip()

    def instance(self, directory: Path) -> dict[str, Any]:
        found: dict[str, Any] = wait_for(
            lambda: (directory / "instance.json").exists() and read_json(directory / "instance.json"), "instance.json")
        return found

    def cleanup(self) -> None:
        for proc, directory in self.started:
            with contextlib.suppress(FileNotFoundError, ValueError):
                group = read_json(directory / "instance.json")["process_group"]
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, signal.SIGKILL)
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=30)


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[Remote]:
    helper = Remote(tmp_path)
    try:
        yield helper
    finally:
        helper.cleanup()


GATED = 'echo $$ > pid; while [ ! -e go ]; do sleep 0.02; done'
"""A worker fragment that records its pid and waits until the test creates ``go`` in its directory."""
