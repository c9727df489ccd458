"""A wrapper killed with SIGKILL at any moment never leaves a half-written file under a final name."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dunscaith.adapters.durable.publish import STAGING_PREFIX
from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles
from dunscaith.domain.model.remote.control import TerminateRequest, decode_files

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")

pytestmark = pytest.mark.slow


def _kill_group_of(directory: Path) -> None:
    with contextlib.suppress(FileNotFoundError, ValueError, KeyError):
        group = json.loads((directory / "instance.json").read_bytes())["process_group"]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(delay=st.floats(min_value=0.0, max_value=0.8), with_request=st.booleans())
def test_a_wrapper_killed_at_random_leaves_only_whole_files(delay: float, with_request: bool) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="dunscaith-crash-"))
    d = scratch / "inst"
    worker = "echo started; sleep 0.3; echo done" if with_request else "echo started; echo done"
    proc = subprocess.Popen([DUNSCAITH, "remote", "run", "--instance-dir", str(d), "--env", "PATH=/usr/bin:/bin",
                             "--", "sh", "-c", worker], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        files = DirectoryInstanceFiles(d)
        if with_request:
            deadline = time.monotonic() + 15
            while not (d / "instance.json").exists() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            if (d / "instance.json").exists():
                _, records = files.read()
                assert records.instance is not None
                files.publish_request(TerminateRequest(records.instance.id, 0.05))
        time.sleep(delay)  # the random moment is the point of this test
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        _kill_group_of(d)
        if not d.exists():
            return
        finals = {p.name: p.read_bytes() for p in d.iterdir()
                  if not p.name.startswith(STAGING_PREFIX) and p.name != "lock"}
        for name, data in finals.items():
            assert data.endswith(b"\n") and json.loads(data), f"{name} is not whole: {data!r}"
        decode_files(finals)  # and together they are a state this instance could have written
        # SIGKILL is delivered at once but the group's processes (which hold the lock) go at the kernel's pace:
        # under load a read just after can still see them alive.
        deadline = time.monotonic() + 15
        while (live := files.read()[0]) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live is False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill_group_of(d)
        shutil.rmtree(scratch, ignore_errors=True)
