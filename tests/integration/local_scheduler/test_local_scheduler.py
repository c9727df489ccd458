"""The local scheduler with real processes: detached owners, crashes mid-release, holds, kills."""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
from pathlib import Path

import pytest

from dunscaith.adapters.durable.lock import FlockLock, is_held
from dunscaith.adapters.scheduler.local import scheduler as local_scheduler
from dunscaith.adapters.scheduler.local.layout import INSTANCE_DIR, LAUNCH_LOCK
from dunscaith.adapters.scheduler.local.views import LOST_OWNER, STRANDED_RELEASE, STRANDED_START
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, CreateOutcome, ObjectSpec, ObjectState, ObjectView
from dunscaith.ports.scheduler import SchedulerError
from tests.integration.local_scheduler.conftest import Local, read_until, wait_for

pytestmark = pytest.mark.slow
needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="/proc is not available on this system")


def _counting(marker: Path, then: str = "exit 0") -> tuple[str, ...]:
    """A job that records each run of itself as one line in ``marker``."""
    return ("sh", "-c", f"echo ran >> {marker}; {then}")


def _runs(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def _ended(local: Local, name: JobId, object_id: ObjectId) -> ObjectView:
    last: list[ObjectView] = []

    def ended() -> bool:
        last[:] = [local.view(name, object_id)]
        return last[0].state in ENDED

    wait_for(f"{object_id} to end", ended)
    return last[0]


# ---------------------------------------------------------------- crashes in the middle of a release


def test_a_releaser_killed_after_the_release_step_leaves_a_pending_object_a_later_release_starts_once(
    local: Local, tmp_path: Path
) -> None:
    marker = tmp_path / "runs"
    name, object_id = local.create(_counting(marker))

    child = local.releaser(object_id, "--kill-at", "released")
    assert child.wait() == -signal.SIGKILL

    view = local.view(name, object_id)
    assert (view.state, view.reason, view.started) == (ObjectState.PENDING, STRANDED_RELEASE, False)
    assert _runs(marker) == 0
    local.scheduler.release(object_id)
    local.scheduler.release(object_id)
    ended = _ended(local, name, object_id)
    assert ended.state is ObjectState.COMPLETED
    assert _runs(marker) == 1


def test_a_releaser_killed_after_deciding_the_start_leaves_a_boot_failure_that_never_runs(
    local: Local, tmp_path: Path
) -> None:
    marker = tmp_path / "runs"
    name, object_id = local.create(_counting(marker))

    child = local.releaser(object_id, "--kill-at", "start-decided")
    assert child.wait() == -signal.SIGKILL

    view = local.view(name, object_id)
    assert (view.state, view.reason, view.started) == (ObjectState.BOOT_FAIL, STRANDED_START, False)
    local.scheduler.release(object_id)  # a started object is never started again
    local.scheduler.cancel(object_id)  # and an ended one needs no cancel
    assert local.view(name, object_id).state is ObjectState.BOOT_FAIL
    assert not (local.directory(object_id) / INSTANCE_DIR).exists()
    assert _runs(marker) == 0


def test_a_start_decided_by_another_process_between_the_lock_probe_and_the_steps_reads_pending_not_boot_failed(
    local: Local, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A boot failure is final and a new attempt follows it, so it must never be read off a start another
    # process decided after this reader probed the launch lock (then free) and before it read the steps.
    marker = tmp_path / "runs"
    name, object_id = local.create(_counting(marker))
    child = local.releaser(object_id, "--kill-at", "start-decided")
    assert child.wait() == -signal.SIGKILL
    owner = FlockLock(local.directory(object_id) / LAUNCH_LOCK)  # held, as the owner that start spawned holds it
    owner.acquire()
    probes = iter([False])  # the first probe came before the releaser took the lock
    monkeypatch.setattr(local_scheduler, "is_held", lambda path: next(probes, is_held(path)))
    view = local.view(name, object_id)
    assert (view.state, view.started) == (ObjectState.PENDING, False)
    owner.release()
    assert local.view(name, object_id).state is ObjectState.BOOT_FAIL  # its owner gone with no instance: final
    assert _runs(marker) == 0


def test_a_releaser_killed_right_after_the_spawn_leaves_an_object_that_runs_once(local: Local, tmp_path: Path) -> None:
    marker = tmp_path / "runs"
    name, object_id = local.create(_counting(marker))

    child = local.releaser(object_id, "--kill-at", "spawned")
    assert child.wait() == -signal.SIGKILL

    assert _ended(local, name, object_id).state is ObjectState.COMPLETED
    local.scheduler.release(object_id)
    assert _runs(marker) == 1


def test_concurrent_releases_from_many_processes_start_the_object_once(local: Local, tmp_path: Path) -> None:
    marker = tmp_path / "runs"
    name, object_id = local.create(_counting(marker))
    go = tmp_path / "go"

    children = [local.releaser(object_id, "--pause-at", "never", "--go", str(go)) for _ in range(4)]
    for child in children:
        assert child.wait() == 0
    local.scheduler.release(object_id)

    assert _ended(local, name, object_id).state is ObjectState.COMPLETED
    assert _runs(marker) == 1


# ---------------------------------------------------------------- cancel_if_not_started racing a release


@pytest.mark.parametrize(("paused_at", "cancel_wins"), [
    ("released", True),  # released (PENDING), its start not decided yet: the cancel step is linked first
    ("start-decided", False),  # the start step is linked: the release won, and the object runs
])
def test_cancel_if_not_started_racing_a_release_either_stops_it_before_anything_runs_or_leaves_it_to_run(
    local: Local, tmp_path: Path, paused_at: str, cancel_wins: bool
) -> None:
    marker, go = tmp_path / "runs", tmp_path / "go"
    name, object_id = local.create(_counting(marker))
    child = local.releaser(object_id, "--pause-at", paused_at, "--go", str(go))
    read_until(child, f"at {paused_at}")

    stopped = local.scheduler.cancel_if_not_started([object_id])
    go.touch()
    read_until(child, "done")

    assert child.wait() == 0
    if cancel_wins:
        assert stopped == [object_id]
        view = local.view(name, object_id)
        assert (view.state, view.started) == (ObjectState.CANCELLED, False)
        assert not (local.directory(object_id) / INSTANCE_DIR).exists()
        assert _runs(marker) == 0
    else:
        assert stopped == []
        assert _ended(local, name, object_id).state is ObjectState.COMPLETED
        assert _runs(marker) == 1


def test_cancel_if_not_started_skips_ids_that_are_not_its_objects(local: Local) -> None:
    name, object_id = local.create(("true",))
    assert local.scheduler.cancel_if_not_started([ObjectId("../../etc"), ObjectId("not-an-id"), object_id]) == [
        object_id]
    assert local.view(name, object_id).state is ObjectState.CANCELLED


# ---------------------------------------------------------------- objects outlive their releaser


def test_an_object_outlives_the_process_that_released_it(local: Local, tmp_path: Path) -> None:
    go, marker = tmp_path / "go", tmp_path / "runs"
    name, object_id = local.create(
        ("sh", "-c", f"echo started > {marker}; while [ ! -e {go} ]; do sleep 0.05; done; exit 7")
    )
    child = local.releaser(object_id, "--linger")
    read_until(child, "done")
    wait_for("the worker to start", marker.exists)

    child.kill()  # SIGKILL: no cleanup of any kind in the releaser
    child.wait()
    assert local.view(name, object_id).state is ObjectState.RUNNING
    go.touch()

    ended = _ended(local, name, object_id)
    assert (ended.state, ended.exit_code) == (ObjectState.FAILED, 7)


@needs_proc
def test_the_process_owner_runs_detached_in_a_session_of_its_own(local: Local, tmp_path: Path) -> None:
    name, object_id = local.create(("sleep", "300"))
    local.scheduler.release(object_id)
    wait_for("RUNNING", lambda: local.view(name, object_id).state is ObjectState.RUNNING)

    instance = json.loads((local.directory(object_id) / INSTANCE_DIR / "instance.json").read_text())
    wrapper = instance["wrapper_pid"]
    assert os.getsid(wrapper) == wrapper != os.getsid(0)
    assert os.readlink(f"/proc/{wrapper}/fd/0") == "/dev/null"
    held_by_owner = {os.readlink(f"/proc/{wrapper}/fd/{fd}") for fd in os.listdir(f"/proc/{wrapper}/fd")}
    assert str(local.directory(object_id) / "launch.lock") in held_by_owner  # so a crash is never a gap
    assert is_held(local.directory(object_id) / "launch.lock")
    worker = instance["worker_pid"]
    wait_for("the job to be exec'd", lambda: Path(f"/proc/{worker}/cmdline").read_bytes() == b"sleep\x00300\x00")
    held_by_job = set()
    for fd in os.listdir(f"/proc/{worker}/fd"):
        try:
            held_by_job.add(os.readlink(f"/proc/{worker}/fd/{fd}"))
        except FileNotFoundError:  # closed while listed (the program's own startup, e.g. its locale)
            pass
    assert str(local.directory(object_id) / "launch.lock") not in held_by_job  # the job never gets the lock


# ---------------------------------------------------------------- hold and cancel before the start


def test_a_hold_between_release_and_start_wins_and_nothing_runs_until_released_again(
    local: Local, tmp_path: Path
) -> None:
    marker, go = tmp_path / "runs", tmp_path / "go"
    name, object_id = local.create(_counting(marker))
    child = local.releaser(object_id, "--pause-at", "released", "--go", str(go))
    read_until(child, "at released")
    assert local.view(name, object_id).state is ObjectState.PENDING

    local.scheduler.hold(object_id)
    go.touch()
    read_until(child, "done")
    assert child.wait() == 0

    assert local.view(name, object_id).state is ObjectState.HELD
    assert _runs(marker) == 0
    local.scheduler.release(object_id)
    assert _ended(local, name, object_id).state is ObjectState.COMPLETED
    assert _runs(marker) == 1


def test_a_cancel_between_release_and_start_wins_and_nothing_ever_runs(local: Local, tmp_path: Path) -> None:
    marker, go = tmp_path / "runs", tmp_path / "go"
    name, object_id = local.create(_counting(marker))
    child = local.releaser(object_id, "--pause-at", "released", "--go", str(go))
    read_until(child, "at released")

    local.scheduler.cancel(object_id)
    go.touch()
    assert child.wait() == 0

    assert local.view(name, object_id).state is ObjectState.CANCELLED
    with pytest.raises(SchedulerError, match="cancelled"):
        local.scheduler.release(object_id)
    assert _runs(marker) == 0


def test_requeue_is_refused_with_the_reason(local: Local) -> None:
    _name, object_id = local.create(("true",))

    with pytest.raises(SchedulerError, match="cannot requeue"):
        local.scheduler.requeue(object_id)


# ---------------------------------------------------------------- cancel of a running object


def test_a_worker_that_ignores_term_is_killed_when_the_grace_ends(local: Local, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    ignore_term = (
        f"import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); open({str(ready)!r}, 'w').close(); "
        "time.sleep(300)"
    )
    name, object_id = local.create((sys.executable, "-c", ignore_term))
    local.scheduler.release(object_id)
    wait_for("the worker to ignore TERM", ready.exists)

    local.scheduler.cancel(object_id)

    ended = _ended(local, name, object_id)
    assert (ended.state, ended.signal, ended.reason) == (
        ObjectState.CANCELLED,
        signal.SIGKILL,
        "killed after the grace",
    )


def test_a_process_owner_killed_by_hand_is_reported_failed_not_running(local: Local) -> None:
    name, object_id = local.create(("sleep", "300"))
    local.scheduler.release(object_id)
    wait_for("RUNNING", lambda: local.view(name, object_id).state is ObjectState.RUNNING)
    instance = json.loads((local.directory(object_id) / INSTANCE_DIR / "instance.json").read_text())

    os.kill(instance["wrapper_pid"], signal.SIGKILL)
    view = _ended(local, name, object_id)

    assert (view.state, view.reason, view.started) == (ObjectState.FAILED, LOST_OWNER, True)
    os.killpg(instance["process_group"], signal.SIGKILL)  # the orphaned worker is ours to clean up here


# ---------------------------------------------------------------- what the worker gets, what others see


@needs_proc
def test_the_environment_reaches_the_worker_and_never_a_command_line(local: Local, tmp_path: Path) -> None:
    secret = "s3cret-value-for-the-worker-only"
    ready = tmp_path / "ready"
    _name, object_id = local.create(
        ("sh", "-c", f'echo "token=$JOB_TOKEN"; touch {ready}; sleep 300'), env={"JOB_TOKEN": secret}
    )
    local.scheduler.release(object_id)
    wait_for("the worker to start", ready.exists)

    directory = local.directory(object_id)
    instance = json.loads((directory / INSTANCE_DIR / "instance.json").read_text())
    for pid in (instance["wrapper_pid"], instance["worker_pid"]):
        assert secret.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert secret not in (directory / INSTANCE_DIR / "launching.json").read_text()
    # the wrapper copies the worker's output through a pipe (and hashes it): the file may trail the touch
    wait_for("the worker's output", lambda: (directory / "stdout").read_text() == f"token={secret}\n")
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert not (directory / "env.json").exists()  # read by the shim as the worker started, then removed
    local.scheduler.cancel(object_id)


def test_the_environment_waits_in_a_private_file_until_the_start(local: Local) -> None:
    _name, object_id = local.create(("true",), env={"JOB_TOKEN": "held-until-release"})
    env_file = local.directory(object_id) / "env.json"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert "held-until-release" in env_file.read_text()


def test_a_program_that_does_not_exist_fails_with_127_and_says_why(local: Local) -> None:
    name, object_id = local.create(("no-such-program-anywhere",))

    local.scheduler.release(object_id)

    ended = _ended(local, name, object_id)
    assert (ended.state, ended.exit_code) == (ObjectState.FAILED, 127)
    assert "cannot run no-such-program-anywhere" in (local.directory(object_id) / "stderr").read_text()


def test_a_working_directory_removed_before_the_release_fails_the_start(local: Local, tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    name, object_id = local.create(("true",), workdir=str(workdir))
    workdir.rmdir()

    local.scheduler.release(object_id)

    ended = _ended(local, name, object_id)
    assert (ended.state, ended.started) == (ObjectState.FAILED, False)
    assert ended.reason.startswith("could not start (cwd")


def test_a_script_object_runs_its_script(local: Local, tmp_path: Path) -> None:
    name = JobId(f"it-script-{os.getpid()}")
    local.names.append(name)
    answer = local.scheduler.create_held(
        ObjectSpec(name=JobId(name), nonce=Nonce("n"), script="echo from-script\nexit 4\n", workdir=str(tmp_path))
    )
    assert answer.object_id is not None

    local.scheduler.release(answer.object_id)

    ended = _ended(local, name, answer.object_id)
    assert (ended.state, ended.exit_code) == (ObjectState.FAILED, 4)
    assert (local.directory(answer.object_id) / "stdout").read_text() == "from-script\n"


def test_refusals_make_no_object(local: Local, tmp_path: Path) -> None:
    bad = [
        ObjectSpec(JobId("x"), Nonce("n"), command=("true",), options=("--partition=big",)),
        ObjectSpec(JobId("x"), Nonce("n")),
        ObjectSpec(JobId("x"), Nonce("n"), command=("true",), workdir=str(tmp_path / "missing")),
    ]
    for spec in bad:
        assert local.scheduler.create_held(spec).outcome is CreateOutcome.REFUSED
    assert local.scheduler.query([JobId("x")], confirm_absent=True).objects == ()
    with pytest.raises(SchedulerError, match="not an object"):
        local.scheduler.release(ObjectId("../../etc"))


def test_wait_for_change_wakes_at_the_objects_end_with_its_outcome_recorded(local: Local, tmp_path: Path) -> None:
    go = tmp_path / "go"
    name, object_id = local.create(("sh", "-c", f"while [ ! -e {go} ]; do sleep 0.05; done"))
    local.scheduler.release(object_id)
    wait_for("it runs", lambda: local.view(name, object_id).state is ObjectState.RUNNING)
    assert local.scheduler.wait_for_change([object_id], 0.3) is False  # running: nothing to announce
    go.touch()
    assert local.scheduler.wait_for_change([object_id], 60.0) is True  # woken by the owner's end
    assert local.view(name, object_id).state is ObjectState.COMPLETED  # the outcome is there already
    assert local.scheduler.wait_for_change([object_id], 0.1) is False  # each end is announced once
