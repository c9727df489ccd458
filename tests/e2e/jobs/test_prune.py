"""``dunscaith prune`` as a user runs it: real processes, SQLite, the local scheduler, a private home."""

from __future__ import annotations

import json
import signal

import pytest

from dunscaith.adapters.residual.files import FileResidualList
from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.residual import ResidualReason
from tests.e2e.jobs.cli import Cli, await_condition, await_state
from tests.e2e.jobs.test_sweeps import make

pytestmark = pytest.mark.slow


def _finished(cli: Cli, job: str) -> None:
    done = cli.run("submit", "--name", job, "--", "true")
    assert done.returncode == 0, done.stderr


def _listed(cli: Cli, *args: str) -> list[str]:
    done = cli.run("list", "--json", *args)
    assert done.returncode == 0, done.stderr
    return [j["job"] for j in json.loads(done.stdout)["jobs"]]


def _entries(cli: Cli, job: str) -> list[tuple[str, ResidualReason]]:
    residual = FileResidualList(cli.tmp / "home" / ".config" / "dunscaith" / "residual")
    return [(r.key, r.entry.reason) for r in residual.entries() if r.job == job and r.entry is not None]


def _pointer(cli: Cli, job: str) -> bool:
    return (cli.tmp / "home" / ".config" / "dunscaith" / "jobs" / job).exists()


def test_a_finished_job_is_pruned_off_the_list_and_onto_the_residual_list(cli: Cli) -> None:
    _finished(cli, "done")
    _finished(cli, "kept")
    assert _pointer(cli, "done")
    pruned = cli.run("prune", "done", "--json")
    assert pruned.returncode == 0, pruned.stderr
    answer = json.loads(pruned.stdout)
    assert (answer["job"], answer["result"]) == ("done", "pruned") and answer["pruned_at"]
    assert _listed(cli) == ["kept"]
    assert _listed(cli, "--all") == ["kept", "done"]  # newest first
    assert "done" not in cli.run("list").stdout  # not even as its residual entry: it has left the list
    rows = [line for line in cli.run("list", "--all").stdout.splitlines() if line.startswith("done ")]
    assert any("succeeded, pruned" in row for row in rows), rows  # its row, and its residual entry's line
    assert _entries(cli, "done") == [("pruned", ResidualReason.PRUNED)]
    assert not _pointer(cli, "done")
    status = cli.run("status", "done")
    assert status.returncode == 0 and "pruned at" in status.stdout
    assert cli.status("done")["pruned_at"] == answer["pruned_at"]
    again = cli.run("prune", "done")
    assert again.returncode == 0 and "was pruned at" in again.stdout
    assert _entries(cli, "done") == [("pruned", ResidualReason.PRUNED)]
    held = cli.run("hold", "done")
    assert held.returncode == 2 and "was pruned at" in held.stderr
    assert not _pointer(cli, "done") and cli.status("done")["requests"] == []  # nothing asked of a pruned job


def test_the_sweep_after_prune_stops_a_held_object_of_the_name_and_never_a_running_one(cli: Cli) -> None:
    _finished(cli, "late")
    local = LocalScheduler(cli.root)
    held = make(local, "late", "not-an-attempt")
    running = make(local, "late", "another", "sleep", "60")
    local.release(running)
    await_condition(lambda: local.view(running).state is ObjectState.RUNNING, what="the object to run")
    try:
        pruned = cli.run("prune", "late")
        assert pruned.returncode == 0, pruned.stderr
        assert f"sweep: stopped {held} on cluster local" in pruned.stderr
        assert running not in pruned.stderr
        fresh = LocalScheduler(cli.root)
        assert fresh.view(held).state is ObjectState.CANCELLED
        assert fresh.view(running).state is ObjectState.RUNNING
    finally:
        local.cancel(running)


def test_older_than_prunes_the_settled_jobs_that_old_and_leaves_the_rest(cli: Cli) -> None:
    _finished(cli, "a")
    broken = cli.run("submit", "--name", "b", "--", "true", DUNSCAITH_TEST_CRASH_AT="submitting-committed")
    assert broken.returncode == -signal.SIGKILL  # recorded, never settled
    young = cli.run("prune", "--older-than", "1h", "--json")
    assert young.returncode == 0, young.stderr
    assert json.loads(young.stdout)["pruned"] == []
    assert _listed(cli) == ["b", "a"]  # newest first
    old = cli.run("prune", "--older-than", "0s", "--json")
    assert old.returncode == 0, old.stderr
    assert [p["job"] for p in json.loads(old.stdout)["pruned"]] == ["a"]
    assert _listed(cli) == ["b"]


def test_a_crash_between_the_residual_entry_and_the_event_is_finished_by_the_next_prune(cli: Cli) -> None:
    _finished(cli, "crashed")
    crashed = cli.run("prune", "crashed", DUNSCAITH_TEST_CRASH_AT="prune-residual-added")
    assert crashed.returncode == -signal.SIGKILL
    assert _entries(cli, "crashed") == [("pruned", ResidualReason.PRUNED)]  # durable first
    assert _listed(cli) == ["crashed"] and cli.status("crashed")["pruned_at"] is None
    assert _pointer(cli, "crashed")
    again = cli.run("prune", "crashed")
    assert again.returncode == 0, again.stderr
    assert _listed(cli) == [] and cli.status("crashed")["pruned_at"] is not None
    assert _entries(cli, "crashed") == [("pruned", ResidualReason.PRUNED)] and not _pointer(cli, "crashed")


def test_a_job_that_is_not_settled_is_refused_in_one_line(cli: Cli) -> None:
    broken = cli.run("submit", "--name", "open", "--", "true", DUNSCAITH_TEST_CRASH_AT="submitting-committed")
    assert broken.returncode == -signal.SIGKILL
    done = cli.run("prune", "open")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "not settled" in done.stderr
    assert _entries(cli, "open") == [] and _listed(cli) == ["open"]


def test_a_job_a_live_supervisor_holds_is_refused(cli: Cli) -> None:
    supervisor = cli.start("submit", "--name", "live", "--", "sleep", "120")
    try:
        await_state(cli, "live", "running", timeout=120)
        done = cli.run("prune", "live")
        assert done.returncode == 2 and "live supervisor" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert _entries(cli, "live") == []
    finally:
        cli.run("stop", "--emergency", "live")
        supervisor.wait(timeout=60)


@pytest.mark.parametrize("args", [("--older-than", "3x"), ("--older-than", "1.5d"), ("x", "--older-than", "1d")])
def test_bad_input_is_one_line_and_exit_2(cli: Cli, args: tuple[str, ...]) -> None:
    done = cli.run("prune", *args)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_job_of_another_host_is_forwarded_there_and_an_unreachable_host_is_never_ran(cli: Cli) -> None:
    cli.pointer_of_another_host("far", "succeeded")
    done = cli.run("prune", "far")
    assert done.returncode == 2
    assert "could not connect to login2" in done.stderr and "nothing ran on login2" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
