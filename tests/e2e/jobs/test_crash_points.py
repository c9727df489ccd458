"""The crash-point sweep: SIGKILL the supervisor at each durable step, reattach, check the promises.

After each crash ``dunscaith supervise JOB`` takes over, and then: the record reads whole, the job
reaches its outcome, at most one object per attempt was ever released (started), and every object
the scheduler made is recorded, or covered by an attempt recorded as unknown.
"""

from __future__ import annotations

import os
import signal

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.state import AttemptState, OutcomeKind, fold
from tests.e2e.jobs.cli import Cli

pytestmark = pytest.mark.slow

SUBMIT_POINTS = [
    "job-recorded",
    "submitting-committed",
    "create-answered",
    "answer-committed",
    "observation-committed",  # the first answer worth committing (pending)
    "observation-committed#2",  # later ones: running, then ended
    "observation-committed#3",
    "local-released",
    "local-start-decided",
    "local-spawned",
    "release-sent",
    "release-committed",
    "outcome-committed",
    "settled-committed",
]


def check_invariants(cli: Cli, job: str) -> None:
    with SqliteStore.open(cli.root, SystemHost()) as store:
        state = fold(store.read(JobId(job)))  # the record reads whole
    assert state.outcome is not None and state.outcome.kind is OutcomeKind.SUCCEEDED, state.outcome
    objects = LocalScheduler(cli.root).query([JobId(job)], confirm_absent=True).objects
    by_nonce = {a.nonce: a for a in state.attempts}
    for obj in objects:
        attempt = by_nonce.get(obj.nonce)  # type: ignore[arg-type]
        assert attempt is not None, f"object {obj.object_id} carries no recorded attempt's nonce"
        assert attempt.object_id == obj.object_id or attempt.order is AttemptState.UNKNOWN, (
            f"object {obj.object_id} is neither recorded nor covered by an unknown attempt")
    released = [o for o in objects if o.state is not ObjectState.HELD]
    for nonce in by_nonce:
        assert sum(1 for o in released if o.nonce == nonce) <= 1  # at most one object released per attempt
    ran = [o for o in released if o.state is not ObjectState.BOOT_FAIL]  # a boot failure ran nothing
    assert len(ran) == 1, [(o.object_id, o.state) for o in objects]  # the command ran once


@pytest.mark.parametrize("point", SUBMIT_POINTS)
def test_a_crash_at_each_step_of_submit_is_carried_on_by_supervise(cli: Cli, point: str) -> None:
    job = f"crash-{point.replace('#', '-')}"
    # a job that lasts a few polls, so its pending, running and ended states are each observed
    command = ("sleep", "1") if point.startswith("observation") else ("true",)
    crashed = cli.run("submit", "--name", job, "--", *command, DUNSCAITH_TEST_CRASH_AT=point)
    assert crashed.returncode == -signal.SIGKILL, (point, crashed.stdout, crashed.stderr)
    carried = cli.run("supervise", job)
    assert carried.returncode == 0, (carried.stdout, carried.stderr)
    if point == "submitting-committed":  # the create never went out: attempt 1 is unknown, on the residual list
        assert residual_entries(cli, job) == ["attempt-1"]
    check_invariants(cli, job)


def residual_entries(cli: Cli, job: str) -> list[str]:
    folder = cli.tmp / "home" / ".config" / "dunscaith" / "residual" / job
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.mark.parametrize("point", ["residual-added", "residual-committed"])
def test_a_crash_while_moving_an_unknown_attempt_to_the_residual_list_is_carried_on(cli: Cli, point: str) -> None:
    job = f"crash-{point}"
    first = cli.run("submit", "--name", job, "--", "true", DUNSCAITH_TEST_CRASH_AT="submitting-committed")
    assert first.returncode == -signal.SIGKILL
    second = cli.run("supervise", job, DUNSCAITH_TEST_CRASH_AT=point)
    assert second.returncode == -signal.SIGKILL, (second.stdout, second.stderr)
    final = cli.run("supervise", job)
    assert final.returncode == 0, (final.stdout, final.stderr)
    assert residual_entries(cli, job) == ["attempt-1"]  # added once, whichever side of the crash
    assert cli.status(job)["settled"]
    check_invariants(cli, job)


def test_crashes_on_reattach_too_are_carried_on(cli: Cli) -> None:
    job = "crash-twice"
    first = cli.run("submit", "--name", job, "--", "true", DUNSCAITH_TEST_CRASH_AT="create-answered")
    assert first.returncode == -signal.SIGKILL
    second = cli.run("supervise", job, DUNSCAITH_TEST_CRASH_AT="unknown-committed")
    assert second.returncode == -signal.SIGKILL
    third = cli.run("supervise", job, DUNSCAITH_TEST_CRASH_AT="observation-committed")
    assert third.returncode == -signal.SIGKILL
    final = cli.run("supervise", job)
    assert final.returncode in (0, 5), final.stderr
    check_invariants(cli, job)


# ---- issue 39: the attempt a rule or a resubmit makes with other needs --------------------------------------
# Each decision point is killed at ten times (the trials differ in their processes' timing): between the
# ended attempt's record and the new attempt's intent ("start-decided"), and once at each later step. The
# ten run with DUNSCAITH_ALL_TRIALS=1 (as they did when the rule landed, 38 of 38; the local out-of-memory
# point's 14 of 14 when the local memory limit landed); the suite runs three of
# each and, of the later steps (a create's ordinary steps, killed at in every job's trials too), the lost
# reply only, to keep CI under its 30 minutes on 2 cores.
ALL_TRIALS = os.environ.get("DUNSCAITH_ALL_TRIALS") == "1"
TRIALS = 10 if ALL_TRIALS else 3
LATER = ["submitting-committed#2", "create-answered#2", "answer-committed#2", "release-committed#2"]
REGROW_POINTS = [*(f"start-decided#2@{trial}" for trial in range(TRIALS)),
                 *(LATER if ALL_TRIALS else ["create-answered#2"])]


def check_one_regrown(cli: Cli, job: str, cause: str) -> None:
    """The job succeeded; each attempt released at most one object, every object is recorded (or covered by
    an unknown attempt); exactly two objects ran: the first attempt's and ONE made by ``cause``."""
    with SqliteStore.open(cli.root, SystemHost()) as store:
        state = fold(store.read(JobId(job)))
    assert state.outcome is not None and state.outcome.kind is OutcomeKind.SUCCEEDED, state.outcome
    objects = LocalScheduler(cli.root).query([JobId(job)], confirm_absent=True).objects
    by_nonce = {a.nonce: a for a in state.attempts}
    for obj in objects:
        attempt = by_nonce.get(obj.nonce)  # type: ignore[arg-type]
        assert attempt is not None, f"object {obj.object_id} carries no recorded attempt's nonce"
        assert attempt.object_id == obj.object_id or attempt.order is AttemptState.UNKNOWN
    ran = [o for o in objects if o.state is not ObjectState.HELD]
    assert len(ran) == 2, [(o.object_id, o.state) for o in objects]
    made = [by_nonce[o.nonce] for o in ran if o.nonce is not None]
    assert sorted(a.cause for a in made) == sorted(["", cause]), [(a.number, a.cause) for a in made]


@pytest.mark.parametrize("point", REGROW_POINTS)
def test_a_crash_between_a_time_limit_and_its_grown_attempt_never_makes_two(cli: Cli, point: str) -> None:
    job = "grow-" + point.replace("#", "-").replace("@", "-")
    crashed = cli.run("submit", "--name", job, "--time", "0:01", "--on-time-limit", "time_factor=8,max_time=1:00",
                      "--", "sleep", "2", DUNSCAITH_TEST_CRASH_AT=point.partition("@")[0])
    assert crashed.returncode == -signal.SIGKILL, (point, crashed.stdout, crashed.stderr)
    carried = cli.run("supervise", job)
    assert carried.returncode == 0, (carried.stdout, carried.stderr)
    check_one_regrown(cli, job, "time-limit")


@pytest.mark.parametrize("point", REGROW_POINTS)
def test_a_crash_between_a_time_limit_and_its_checkpoint_requeue_never_makes_two(cli: Cli, point: str) -> None:
    job = "ckpt-" + point.replace("#", "-").replace("@", "-")
    script = cli.tmp / "train.sh"
    script.write_text('#!/bin/sh\nif [ -f "$1" ]; then exit 0; fi\ntrap \'echo 5 > "$1"\' USR1\n'
                      "while true; do sleep 0.2; done\n")
    script.chmod(0o755)
    crashed = cli.run("submit", "--name", job, "--time", "0:02", "--signal-before", "USR1@1",
                      "--requeue-on-time-limit", "1", "--", str(script), str(cli.tmp / "ck"),
                      DUNSCAITH_TEST_CRASH_AT=point.partition("@")[0])
    assert crashed.returncode == -signal.SIGKILL, (point, crashed.stdout, crashed.stderr)
    carried = cli.run("supervise", job)
    assert carried.returncode == 0, (carried.stdout, carried.stderr)
    check_one_regrown(cli, job, "checkpoint")


# touches 200 MiB for 3 s (the local scheduler's watchdog samples its memory every second): past 100M, within 400M
GREEDY = "import time; b = b'x' * (200 * 2**20); time.sleep(3)"


@pytest.mark.parametrize("point", REGROW_POINTS)
def test_a_crash_between_an_out_of_memory_end_and_its_grown_attempt_never_makes_two(cli: Cli, point: str) -> None:
    job = "oom-" + point.replace("#", "-").replace("@", "-")
    crashed = cli.run("submit", "--name", job, "--mem", "100M", "--on-out-of-memory",
                      "memory_factor=4,max_memory=1G,attempts=1", "--", "python3", "-c", GREEDY,
                      DUNSCAITH_TEST_CRASH_AT=point.partition("@")[0])
    assert crashed.returncode == -signal.SIGKILL, (point, crashed.stdout, crashed.stderr)
    carried = cli.run("supervise", job)
    assert carried.returncode == 0, (carried.stdout, carried.stderr)
    check_one_regrown(cli, job, "out-of-memory")
    first, *grown = [a["needs"] for a in cli.status(job)["attempts"]]  # a grown attempt never made is made again
    assert first == ["memory=100M"] and grown and all(needs == ["memory=400M"] for needs in grown), (first, grown)


@pytest.mark.parametrize("trial", range(TRIALS))
def test_a_crash_between_a_resubmit_with_more_memory_and_its_attempt_never_makes_two(cli: Cli, trial: int) -> None:
    job = f"more-{trial}"
    failed = cli.run("submit", "--name", job, "--mem", "100M", "--", "python3", "-c", GREEDY)
    assert failed.returncode == 1, failed.stderr
    assert cli.run("resubmit", job, "--memory", "1G").returncode == 0
    crashed = cli.run("supervise", job, DUNSCAITH_TEST_CRASH_AT="start-decided")
    assert crashed.returncode == -signal.SIGKILL, (crashed.stdout, crashed.stderr)
    carried = cli.run("supervise", job)
    assert carried.returncode == 0, (carried.stdout, carried.stderr)
    check_one_regrown(cli, job, "resubmit")
