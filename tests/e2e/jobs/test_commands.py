"""The job commands as a user runs them: real processes, SQLite, the local scheduler, with and without a
live supervisor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState
from tests.e2e.jobs.cli import Cli, await_condition, await_long_sleep, await_state

pytestmark = pytest.mark.slow


def _supervised(cli: Cli, job: str, *command: str) -> subprocess.Popen[str]:
    supervisor = cli.start("submit", "--name", job, "--", *(command or ("sleep", "120")))
    await_state(cli, job, "running", timeout=120)
    return supervisor


def _unattended(cli: Cli, job: str) -> None:
    """A running job whose supervisor was killed: no one holds its lock."""
    supervisor = _supervised(cli, job)
    os.killpg(supervisor.pid, signal.SIGKILL)
    supervisor.wait()


def _object(cli: Cli, job: str) -> ObjectId:
    return ObjectId(str(cli.status(job)["attempts"][-1]["object_id"]))


def _ended(cli: Cli, object_id: str) -> bool:
    return LocalScheduler(cli.root).view(object_id).state in ENDED  # type: ignore[arg-type]


def _answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _emergency(cli: Cli, job: str) -> None:
    cli.run("stop", "--emergency", job)


def test_a_cancel_wakes_a_supervisor_asleep_to_its_next_poll(cli: Cli) -> None:
    """supervise.poll = 3600: once the quick polls after the start have grown, the supervisor reads its
    record only when an append wakes it; the cancel, which waits 5 s for an answer here, is answered."""
    supervisor = cli.start("submit", "--name", "c-asleep", "--", "sleep", "300", DUNSCAITH_SUPERVISE__POLL="3600")
    await_state(cli, "c-asleep", "running", timeout=120)
    await_long_sleep(cli, "c-asleep", 15)
    done = cli.run("cancel", "c-asleep", "--json", DUNSCAITH_COMMANDS__WAIT="5")
    assert done.returncode == 0, done.stderr
    answer = _answer(done)
    assert (answer["answer"], answer["by"]) == ("confirmed", "its supervisor")
    assert supervisor.wait(timeout=60) == 1
    assert cli.status("c-asleep")["state"] == "cancelled"


def test_cancel_with_a_live_supervisor_is_answered_by_it_and_the_job_ends_cancelled(cli: Cli) -> None:
    supervisor = _supervised(cli, "c-live")
    done = cli.run("cancel", "c-live", "--json")
    assert done.returncode == 0, done.stderr
    answer = _answer(done)
    assert (answer["answer"], answer["by"]) == ("confirmed", "its supervisor")
    assert supervisor.wait(timeout=60) == 1  # the outcome is not success
    out = supervisor.stdout.read() if supervisor.stdout else ""
    assert "outcome: cancelled" in out
    status = cli.status("c-live")
    assert status["outcome"]["result"] == "cancelled" and status["settled"]
    pointer = cli.tmp / "home" / ".config" / "dunscaith" / "jobs" / "c-live"
    assert json.loads(pointer.read_text())["state"] == "cancelled"


def test_cancel_without_a_supervisor_takes_the_lock_acts_and_updates_the_pointer(cli: Cli) -> None:
    _unattended(cli, "c-here")
    object_id = _object(cli, "c-here")
    done = cli.run("cancel", "c-here")
    assert done.returncode == 0, done.stderr
    assert "job c-here: cancel confirmed by this command" in done.stdout
    # the command waits for the stop itself, under the lock, and records the end it sees
    assert f"job c-here: object {object_id} stopped (now cancelled)" in done.stdout
    assert not cli.status("c-here")["supervisor"]["held"]  # the lock was released again
    pointer = cli.tmp / "home" / ".config" / "dunscaith" / "jobs" / "c-here"
    assert _ended(cli, object_id)
    assert cli.status("c-here")["outcome"]["result"] == "cancelled"
    assert json.loads(pointer.read_text())["state"] == "cancelled"


@pytest.mark.parametrize("live", [True, False])
def test_a_request_the_rules_refuse_is_answered_refused_and_exits_2(cli: Cli, live: bool) -> None:
    job = f"refuse-{live}"
    supervisor = _supervised(cli, job) if live else None
    if not live:
        _unattended(cli, job)
    try:
        held = cli.run("hold", job)  # a local object starts when released: it cannot be held now
        assert held.returncode == 2 and f"job {job}: hold refused by" in held.stderr, held.stdout
        assert "only an object that has not started can be held" in held.stderr and held.stdout == ""
        replaced = cli.run("resubmit", job)
        assert replaced.returncode == 2 and "cancel or requeue a running one" in replaced.stderr
        released = cli.run("release", job, "--json")
        assert released.returncode == 2 and _answer(released)["answer"] == "refused"
        assert _answer(released)["error"]["code"] == "refused" and _answer(released)["error"]["exit_code"] == 2
        assert ("its supervisor" if live else "this command") == _answer(released)["by"]
    finally:
        _emergency(cli, job)
        if supervisor is not None:
            supervisor.wait(timeout=60)


@pytest.mark.parametrize("live", [True, False])
def test_give_up_and_abandon(cli: Cli, live: bool) -> None:
    job = f"let-go-{live}"
    supervisor = _supervised(cli, job) if live else None
    if not live:
        _unattended(cli, job)
    object_id = _object(cli, job)
    try:
        assert cli.run("give-up", job).returncode == 0
        abandoned = cli.run("abandon", job, "--json")
        assert abandoned.returncode == 0, abandoned.stderr
        assert _answer(abandoned)["answer"] == "confirmed"
        if supervisor is not None:
            assert supervisor.wait(timeout=60) == 1
        await_condition(lambda: cli.status(job)["settled"], 90, "the record to settle")
        assert cli.status(job)["outcome"]["result"] == "abandoned"
        entries = cli.tmp / "home" / ".config" / "dunscaith" / "residual" / job
        assert [p.name for p in entries.iterdir()] == ["attempt-1"]
        assert LocalScheduler(cli.root).view(object_id).state is ObjectState.RUNNING  # never a running one
        again = cli.run("cancel", job)
        assert again.returncode == 2 and "settled" in again.stderr
    finally:
        _emergency(cli, job)


def test_fifty_concurrent_commands_against_one_supervised_job_are_each_answered_once(cli: Cli) -> None:
    supervisor = _supervised(cli, "busy")
    try:
        actions = ["give-up" if n % 2 else "release" for n in range(50)]
        with ThreadPoolExecutor(max_workers=50) as pool:
            done = list(pool.map(lambda a: cli.run(a, "busy", "--json", timeout=300,
                                                   DUNSCAITH_COMMANDS__WAIT="240"), actions))
        for action, d in zip(actions, done, strict=True):
            assert "database is locked" not in d.stderr, d.stderr
            answer = _answer(d)
            expected = ("confirmed", 0) if action == "give-up" else ("refused", 2)
            assert (answer["answer"], d.returncode) == expected, (action, d.stdout, d.stderr)
        ids = [_answer(d)["request"] for d in done]
        assert len(set(ids)) == 50
        with_record = cli.run("status", "busy", "--json")
        assert with_record.returncode == 0
    finally:
        _emergency(cli, "busy")
        supervisor.wait(timeout=60)
    from dunscaith.adapters.host.system import SystemHost
    from dunscaith.adapters.store.sqlite.store import SqliteStore

    with SqliteStore.open(cli.root, SystemHost()) as store:
        lines = store.read(JobId("busy")).events
    requests = [line.data["request"] for line in lines if line.kind == "request"]
    answers = [line.data["request"] for line in lines if line.kind == "answer"]
    assert sorted(requests) == sorted(answers) == sorted(ids)  # none lost, each answered once


def test_a_command_killed_between_its_commit_and_its_scheduler_call_is_carried_on(cli: Cli) -> None:
    _unattended(cli, "killed")
    object_id = _object(cli, "killed")
    crashed = cli.run("cancel", "killed", DUNSCAITH_TEST_CRASH_AT="request-answered")
    assert crashed.returncode == -signal.SIGKILL
    assert not _ended(cli, object_id)  # the answer is committed; the scheduler was never asked
    status = cli.status("killed")
    assert status["outcome"] is None
    # the next actor carries the confirmed cancel out (the local scheduler's grace is 10 s: wait longer)
    carried = cli.run("reconcile", "killed", DUNSCAITH_SUPERVISE__WAIT="40")
    assert carried.returncode == 1, (carried.stdout, carried.stderr)  # outcome: cancelled
    assert _ended(cli, object_id)
    assert cli.status("killed")["outcome"]["result"] == "cancelled"
    assert "stopping" in carried.stdout


def test_a_job_of_another_host_is_forwarded_there_and_an_unreachable_host_is_never_ran(cli: Cli) -> None:
    cli.pointer_of_another_host("far", "running")
    done = cli.run("hold", "far")
    assert done.returncode == 2
    assert "could not connect to login2" in done.stderr and "nothing ran on login2" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_stop_emergency_for_another_host_s_job_never_forwards(cli: Cli) -> None:
    cli.pointer_of_another_host("far", "running")
    done = cli.run("stop", "--emergency", "far")
    # nothing here can reach login2's local processes, so "nothing to stop" would mislead: say where
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().endswith("type `dunscaith stop --emergency far` on login2"), done.stderr
    assert "ssh" not in done.stderr  # no hop was tried (it would be refused here, and say so)
    assert not (cli.tmp / "home" / ".config" / "dunscaith" / "forwarded").exists()


def test_stop_emergency_with_an_explicit_cluster_says_only_what_it_stopped(cli: Cli) -> None:
    cli.pointer_of_another_host("far2", "running")
    done = cli.run("stop", "--emergency", "far2", "--cluster", "local")
    assert done.returncode == 0 and "nothing of far2 to stop on cluster local" in done.stdout


def test_reconcile_with_a_live_supervisor_says_it_carries_on(cli: Cli) -> None:
    supervisor = _supervised(cli, "r-live")
    try:
        done = cli.run("reconcile", "r-live", "--json")
        assert done.returncode == 0 and _answer(done)["supervised"] is True
    finally:
        _emergency(cli, "r-live")
        supervisor.wait(timeout=60)


def test_reconcile_of_an_unattended_running_job_says_its_bound_and_ends_5_at_supervise_wait(cli: Cli) -> None:
    # Issue 38: it supervised such a job to its end with no word of how long it might take (supervise.wait
    # is 300 s unless set); its help said "for at most supervise.wait", which is what it does, and now says.
    _unattended(cli, "r-bound")
    try:
        done = cli.run("reconcile", "r-bound", DUNSCAITH_SUPERVISE__WAIT="2")
        assert done.returncode == 5, (done.stdout, done.stderr)
        assert done.stdout.startswith("job r-bound: no outcome yet: supervised for at most supervise.wait (2 s), "
                                      "then exit 5 with what is left (to follow it to its outcome: dunscaith "
                                      "supervise r-bound)\n")
        assert "work outstanding after supervise.wait" in done.stderr and "is running" in done.stderr
        assert cli.status("r-bound")["state"] == "running"
    finally:
        _emergency(cli, "r-bound")


def test_requeue_the_local_scheduler_cannot_do_is_refused_up_front_and_exits_2(cli: Cli) -> None:
    _unattended(cli, "rq")
    try:
        done = cli.run("requeue", "rq")
        assert done.returncode == 2, (done.stdout, done.stderr)
        said = done.stdout + done.stderr
        assert "requeue refused" in said and "the local scheduler cannot requeue" in said
        assert "confirmed" not in said
        assert cli.status("rq")["state"] == "running"
    finally:
        _emergency(cli, "rq")
