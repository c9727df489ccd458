"""The local scheduler's own resident-memory limit (issue 39), with real processes: the job's watchdog
(exec_shim.py) samples the resident memory of the job's whole process tree and kills it past ``--mem``, so
the object ends out of memory as a Slurm job past its cgroup's limit does; a job under it is left alone; a
child that allocates is caught, even one in a session of its own; one watchdog per job, none without limits."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.local.layout import INSTANCE_DIR, OOM_MARK, TIME_LIMIT_MARK
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState, ObjectView
from dunscaith.domain.model.jobs.resources import Resources
from tests.integration.local_scheduler.conftest import Local, wait_for

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="the watchdog reads /proc")]

LIMIT = Resources(memory_mb=100)


def _holding(mib: int, ready: Path, then: str = "time.sleep(300)") -> str:
    """Python that allocates and touches ``mib`` MiB (a bytes object is written, page by page), says so in
    ``ready`` (its pid), then ``then`` (by default it waits to be killed)."""
    return (f"import os, time; b = b'x' * ({mib} * 2**20); open({str(ready)!r}, 'w').write(str(os.getpid())); "
            f"{then}")


def _ended(local: Local, name: JobId, object_id: ObjectId) -> ObjectView:
    last: list[ObjectView] = []

    def ended() -> bool:
        last[:] = [local.view(name, object_id)]
        return last[0].state in ENDED

    wait_for(f"{object_id} to end", ended)
    return last[0]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in "ZXx"


def test_a_job_past_its_memory_ends_out_of_memory(local: Local, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    name, object_id = local.create((sys.executable, "-c", _holding(300, ready)), resources=LIMIT)

    local.scheduler.release(object_id)

    ended = _ended(local, name, object_id)
    assert (ended.state, ended.signal, ended.exit_code) == (ObjectState.OUT_OF_MEMORY, signal.SIGKILL, None)
    assert ended.reason.startswith("its memory limit was passed ("), ended.reason
    assert ended.reason.endswith(" resident, its limit 100M): killed (SIGKILL)"), ended.reason
    assert (local.directory(object_id) / OOM_MARK).exists()
    assert not (local.directory(object_id) / TIME_LIMIT_MARK).exists()


def test_a_job_under_its_memory_completes(local: Local, tmp_path: Path) -> None:
    # lives three seconds, sampled about three times, at 30 of its 100 MiB
    name, object_id = local.create((sys.executable, "-c", _holding(30, tmp_path / "ready", "time.sleep(3)")),
                                   resources=LIMIT)

    local.scheduler.release(object_id)

    ended = _ended(local, name, object_id)
    assert (ended.state, ended.exit_code, ended.signal) == (ObjectState.COMPLETED, 0, None)
    assert not (local.directory(object_id) / OOM_MARK).exists()


@pytest.mark.parametrize("start", ["", "setsid "])
def test_a_child_past_the_job_s_memory_is_caught_and_the_whole_tree_killed(
    local: Local, tmp_path: Path, start: str
) -> None:
    """The job is a shell; its child allocates (in the job's process group, or in a session of its own,
    where a kill of the group would not reach it). "after" is never printed: the shell was killed too."""
    ready = tmp_path / "ready"
    child = f"{start}{sys.executable} -c \"{_holding(300, ready)}\""
    name, object_id = local.create(("sh", "-c", f"{child}; echo after"), resources=LIMIT)

    local.scheduler.release(object_id)

    ended = _ended(local, name, object_id)
    assert (ended.state, ended.signal) == (ObjectState.OUT_OF_MEMORY, signal.SIGKILL), ended
    wait_for("the allocating child to be gone", lambda: ready.exists() and _gone(int(ready.read_text())))
    assert "after" not in (local.directory(object_id) / "stdout").read_text()


def _children(worker: int) -> list[int]:
    """The job's own children: once it has exec'd ``sleep``, only its watchdog can be one."""
    children: list[int] = []
    for tid in os.listdir(f"/proc/{worker}/task"):
        children += [int(c) for c in Path(f"/proc/{worker}/task/{tid}/children").read_text().split()]
    return children


@pytest.mark.parametrize(("resources", "watchdogs"), [
    (Resources(memory_mb=100, time_limit_s=300), 1),
    (Resources(memory_mb=100), 1),
    (Resources(time_limit_s=300), 1),
    (Resources(cpus=1), 0),
])
def test_one_watchdog_per_job_for_both_limits_and_none_without_them(
    local: Local, tmp_path: Path, resources: Resources, watchdogs: int
) -> None:
    ready = tmp_path / "ready"
    name, object_id = local.create(("sh", "-c", f"touch {ready}; exec sleep 300"), resources=resources)
    local.scheduler.release(object_id)
    wait_for("the job to start", ready.exists)
    worker = json.loads((local.directory(object_id) / INSTANCE_DIR / "instance.json").read_text())["worker_pid"]
    wait_for("the job's exec of sleep", lambda: Path(f"/proc/{worker}/comm").read_text().strip() == "sleep")

    assert len(_children(worker)) == watchdogs

    local.scheduler.cancel(object_id)
    assert _ended(local, name, object_id).state is ObjectState.CANCELLED
