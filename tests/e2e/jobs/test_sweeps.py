"""Residual sweeps as a user meets them: real processes, the local scheduler, the list in a private home."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.adapters.residual.files import FileResidualList
from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectSpec, ObjectState
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReason
from tests.e2e.jobs.cli import Cli, await_condition

pytestmark = pytest.mark.slow


def residual(cli: Cli) -> FileResidualList:
    return FileResidualList(cli.tmp / "home" / ".config" / "dunscaith" / "residual")


def listed(cli: Cli, job: str, nonce: str | None, *, days_ago: float = 0,
           reason: ResidualReason = ResidualReason.UNKNOWN) -> ResidualEntry:
    entry = ResidualEntry(JobId(job), "local", "local", reason, None if nonce is None else 1,
                          None if nonce is None else Nonce(nonce), datetime.now(UTC) - timedelta(days=days_ago))
    residual(cli).add(entry)
    return entry


def make(local: LocalScheduler, job: str, nonce: str, *command: str) -> ObjectId:
    answer = local.create_held(ObjectSpec(JobId(job), Nonce(nonce), command or ("true",), workdir="/"))
    assert answer.object_id is not None, answer
    return answer.object_id


def test_a_sweep_stops_a_listed_held_object_and_never_a_running_or_foreign_one(cli: Cli) -> None:
    local = LocalScheduler(cli.root)
    late = make(local, "lost", "n1")
    foreign = make(local, "lost", "not-a-recorded-nonce")
    running = make(local, "lost2", "n2", "sleep", "60")
    local.release(running)
    await_condition(lambda: local.view(running).state is ObjectState.RUNNING, what="the object to run")
    listed(cli, "lost", "n1")
    listed(cli, "lost2", "n2")
    try:
        done = cli.run("submit", "--name", "other", "--", "true")
        assert done.returncode == 0, done.stderr
        assert f"sweep: stopped {late} on cluster local" in done.stderr
        assert foreign not in done.stderr and running not in done.stderr
        fresh = LocalScheduler(cli.root)
        assert fresh.view(late).state is ObjectState.CANCELLED
        assert fresh.view(foreign).state is ObjectState.HELD
        assert fresh.view(running).state is ObjectState.RUNNING
        again = cli.run("status", "other")  # status sweeps too: nothing left to stop
        assert again.returncode == 0 and "sweep: stopped" not in again.stderr
    finally:
        local.cancel(running)


def test_a_pruned_jobs_not_started_objects_are_all_stopped(cli: Cli) -> None:
    local = LocalScheduler(cli.root)
    a, b = make(local, "pruned", "p1"), make(local, "pruned", "p2")
    listed(cli, "pruned", None, reason=ResidualReason.PRUNED)
    done = cli.run("submit", "--name", "other", "--", "true")
    assert done.returncode == 0, done.stderr
    fresh = LocalScheduler(cli.root)
    assert [fresh.view(o).state for o in (a, b)] == [ObjectState.CANCELLED, ObjectState.CANCELLED]


def test_an_expired_entry_is_dropped_and_reported_by_list_and_the_object_left_alone(cli: Cli) -> None:
    local = LocalScheduler(cli.root)
    late = make(local, "old", "n1")
    listed(cli, "old", "n1", days_ago=31)
    listed(cli, "young", "n2", days_ago=1)
    plain = cli.run("list")
    assert plain.returncode == 0, plain.stderr
    assert "residual entry old (unknown, attempt 1's object, cluster local) expired" in plain.stderr
    assert "old  residual (unknown: attempt 1, cluster local; expired" in plain.stdout
    assert "young  residual (unknown: attempt 1, cluster local; added" in plain.stdout
    assert [r.job for r in residual(cli).entries()] == ["young"]
    as_json = json.loads(cli.run("list", "--json").stdout)
    assert [(j["job"], j["residual"]["expired"]) for j in as_json["residual"]] == [("young", False)]
    assert LocalScheduler(cli.root).view(late).state is ObjectState.HELD  # an expired entry sweeps nothing
