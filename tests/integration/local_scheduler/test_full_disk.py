"""Issue 22 item 2, as the local scheduler reads it: a record root on a real 2 MB tmpfs, filled while a
job runs. The object is never reported failed for a full disk: running with "disk full" while its
process owner keeps the outcome, completed once space returns, and "unknown" (a person decides, it is
never tried again) when the owner ended before it could write the outcome."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from dunscaith.adapters.scheduler.local import LocalScheduler
from dunscaith.adapters.scheduler.local.layout import INSTANCE_DIR
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState, ObjectView
from tests.contract.scheduler_params import remote_run_problem
from tests.infra.tmpfs import SmallDisk, small_tmpfs
from tests.integration.local_scheduler.conftest import Local, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def on_small_disk(tmp_path: Path) -> Iterator[tuple[Local, SmallDisk]]:
    problem = remote_run_problem()
    if problem:
        pytest.skip(problem)
    with small_tmpfs(tmp_path / "disk") as disk:
        root = disk.path / "records"
        made = Local(root, LocalScheduler(root, grace_seconds=1.0))
        try:
            yield made, disk
        finally:
            disk.free()
            for name in made.names:
                try:
                    made.scheduler.stop_by_name(name)
                except Exception:  # teardown: the test's own assertion is what matters
                    pass


def _running_full(local: Local, name: JobId, object_id: ObjectId) -> ObjectView | None:
    view = local.view(name, object_id)
    return view if view.state is ObjectState.RUNNING and view.reason.startswith("disk full") else None


def _staging(local: Local, object_id: ObjectId) -> list[str]:
    return [p.name for p in local.directory(object_id).rglob(".staging.*")]


def test_a_job_that_ends_on_a_full_disk_is_running_disk_full_then_completed(on_small_disk: tuple[Local, SmallDisk],
                                                                            tmp_path: Path) -> None:
    local, disk = on_small_disk
    gate = tmp_path / "gate"
    name, object_id = local.create(("sh", "-c", f"echo started; while [ ! -e {gate} ]; do sleep 0.05; done"))
    local.scheduler.release(object_id)
    wait_for("RUNNING", lambda: local.view(name, object_id).state is ObjectState.RUNNING)
    # the first line is written after the shim removed env.json: nothing frees space after the fill
    wait_for("its first line", lambda: (local.directory(object_id) / "stdout").read_bytes() == b"started\n")
    disk.fill()
    gate.touch()  # the worker ends, exit 0, on the full disk

    view = cast(ObjectView, wait_for("running, disk full", lambda: _running_full(local, name, object_id)))
    assert "the worker ended with exit code 0; its outcome is kept by the process owner" in view.reason
    assert "No space left on device" in view.reason
    assert _staging(local, object_id) == []
    local.scheduler.cancel(object_id)  # its worker has ended: nothing to stop, and no error for it

    disk.free()
    wait_for("the end", lambda: local.view(name, object_id).state in ENDED)
    ended = local.view(name, object_id)
    assert (ended.state, ended.exit_code, ended.reason) == (ObjectState.COMPLETED, 0, "")
    assert _staging(local, object_id) == []


def test_an_owner_that_ends_before_it_could_write_the_outcome_is_unknown_not_failed(
        on_small_disk: tuple[Local, SmallDisk], tmp_path: Path) -> None:
    local, disk = on_small_disk
    gate = tmp_path / "gate"
    name, object_id = local.create(("sh", "-c", f"echo started; while [ ! -e {gate} ]; do sleep 0.05; done"))
    local.scheduler.release(object_id)
    wait_for("RUNNING", lambda: local.view(name, object_id).state is ObjectState.RUNNING)
    wait_for("its first line", lambda: (local.directory(object_id) / "stdout").read_bytes() == b"started\n")
    instance = json.loads((local.directory(object_id) / INSTANCE_DIR / "instance.json").read_text())
    disk.fill()
    gate.touch()
    wait_for("running, disk full", lambda: _running_full(local, name, object_id))

    os.kill(instance["wrapper_pid"], signal.SIGKILL)
    wait_for("the end", lambda: local.view(name, object_id).state in ENDED)
    view = local.view(name, object_id)
    assert view.state is ObjectState.UNKNOWN and view.exit_code is None
    assert view.reason.startswith("disk full: the outcome is not known: the process owner could not write "
                                  "outcome.json (No space left on device, since "), view.reason
    assert "the worker ended with exit code 0, as the owner noted" in view.reason


def test_output_written_while_the_disk_is_full_waits_and_reaches_the_file_whole(on_small_disk: tuple[Local, SmallDisk],
                                                                               tmp_path: Path) -> None:
    local, disk = on_small_disk
    gate = tmp_path / "gate"
    size = 300_000
    name, object_id = local.create(("sh", "-c", f"echo started; while [ ! -e {gate} ]; do sleep 0.05; done; "
                                                f"head -c {size} /dev/zero | tr '\\0' x; echo; echo end"))
    local.scheduler.release(object_id)
    stdout = local.directory(object_id) / "stdout"
    wait_for("its first line", lambda: stdout.read_bytes() == b"started\n")
    disk.fill()
    gate.touch()  # its output now meets the full disk

    view = cast(ObjectView, wait_for("running, disk full", lambda: _running_full(local, name, object_id)))
    assert "the worker's output waits to be written to its stdout file; nothing of it is dropped" in view.reason

    disk.free()
    wait_for("the end", lambda: local.view(name, object_id).state in ENDED)
    assert local.view(name, object_id).state is ObjectState.COMPLETED
    expected = b"started\n" + b"x" * size + b"\nend\n"
    assert stdout.read_bytes() == expected  # nothing lost, nothing doubled
    outcome = json.loads((local.directory(object_id) / INSTANCE_DIR / "outcome.json").read_text())
    assert outcome["stdout_bytes"] == len(expected)
    assert _staging(local, object_id) == []
