"""What a job's start and end cost the wrapper: a short job makes no watch; every name is made durable
before anything depends on it (launching.json's by the sync for instance.json, before the worker runs)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles
from dunscaith.domain.model.remote.control import TerminateRequest
from tests.e2e.remote.conftest import DUNSCAITH

pytestmark = pytest.mark.slow

# The wrapper in a process of its own, its directory syncs, final links and watches logged in order.
LOGGED = """
import os
import sys
from pathlib import Path
from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.durable import publish
from dunscaith.adapters.process.directory_watch import watch_directory
from dunscaith.adapters.process.wrapper import LaunchSpec, PosixWrapper

events = []
real_sync, real_link = publish.sync_dir, os.link

def sync_dir(path):
    real_sync(path)
    events.append("sync")

def link(source, target, **kwargs):
    real_link(source, target, **kwargs)
    events.append("link " + os.path.basename(target))

def watch(directory):
    events.append("watch")
    return watch_directory(directory)

publish.sync_dir, os.link = sync_dir, link
wrapper = PosixWrapper(Path(sys.argv[1]), SystemClock(), watch=watch)
wrapper.claim()
code = wrapper.run(LaunchSpec(tuple(sys.argv[2:]), {"PATH": "/usr/bin:/bin"}, "/"))
print(" / ".join(events))
sys.exit(code)
"""


def _logged(directory: Path, *argv: str) -> str:
    done = subprocess.run([sys.executable, "-c", LOGGED, str(directory), *argv], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_job_that_ends_at_once_makes_no_watch_and_one_sync_per_name_that_must_last(tmp_path: Path) -> None:
    # launching.json's name is made durable by the sync after instance.json's link, which comes before the
    # barrier opens: nothing runs before both names are on disk.
    assert _logged(tmp_path / "inst", "true") == ("link launching.json / link instance.json / sync / "
                                                   "link outcome.json / sync")


def test_a_job_that_runs_on_gets_the_directory_watched(tmp_path: Path) -> None:
    assert _logged(tmp_path / "inst", "sleep", "0.5") == ("link launching.json / link instance.json / sync / watch / "
                                                           "link outcome.json / sync")


def test_a_request_linked_before_the_watch_is_made_is_answered(tmp_path: Path) -> None:
    d = tmp_path / "inst"
    proc = subprocess.Popen([DUNSCAITH, "remote", "run", "--instance-dir", str(d), "--env", "PATH=/usr/bin:/bin",
                             "--", "sleep", "1000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not (d / "instance.json").exists():
            assert time.monotonic() < deadline, "no instance.json"
            time.sleep(0.001)
        files = DirectoryInstanceFiles(d)
        _, records = files.read()
        assert records.instance is not None
        assert files.publish_request(TerminateRequest(records.instance.id, 0.0))  # at once: no watch yet
        assert proc.wait(timeout=30) == 128 + 15
        assert json.loads((d / "terminated.json").read_bytes())["signal"] == "TERM"
        assert json.loads((d / "outcome.json").read_bytes())["signal"] == 15
    finally:
        if proc.poll() is None:
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                os.killpg(json.loads((d / "instance.json").read_bytes())["process_group"], signal.SIGKILL)
            proc.kill()
        proc.communicate(timeout=30)
