"""``dunscaith submit --after/--after-any/--after-each`` as a user runs it (issue 40): the waiting job records
what it waits for (``events`` shows it); every refusal is one line, exit 2, with nothing recorded."""

from __future__ import annotations

import json

import pytest

from tests.e2e.jobs.cli import Cli, await_condition, await_state
from tests.e2e.jobs.test_submit_sweep import one_line

pytestmark = pytest.mark.slow


def recorded(cli: Cli) -> list[tuple[str, str]]:
    done = cli.run("list", "--all", "--json")
    assert done.returncode == 0, done.stderr
    return sorted((job["job"], job["state"]) for job in json.loads(done.stdout)["jobs"])


def test_a_job_after_another_records_what_it_waits_for(cli: Cli) -> None:
    assert cli.run("submit", "--name", "A", "--", "true").returncode == 0
    assert cli.run("submit", "--name", "C", "--", "true").returncode == 0
    done = cli.run("submit", "--name", "B", "--after", "A", "--after-any", "C", "--", "sh", "-c", "echo b")
    assert done.returncode == 0, done.stderr
    first = cli.run("events", "B").stdout.splitlines()
    assert any("recorded:" in line and "after A" in line and "after_any C" in line for line in first), first
    assert ("B", "succeeded") in recorded(cli)


def test_a_sweep_after_each_element_of_another_records_it_on_every_element(cli: Cli) -> None:
    assert cli.run("submit", "--name", "S", "--array", "0-2", "--", "echo", "{}").returncode == 0
    done = cli.run("submit", "--name", "T", "--array", "0-2", "--after-each", "S", "--", "echo", "{}")
    assert done.returncode == 0, done.stderr
    for index in range(3):
        assert "after_each S" in cli.run("events", f"T-{index}").stdout


def test_every_refusal_of_a_wait_is_one_line_exit_2_and_records_nothing(cli: Cli) -> None:
    assert cli.run("submit", "--name", "A", "--", "true").returncode == 0
    assert cli.run("submit", "--name", "S", "--array", "0-2", "--", "echo", "{}").returncode == 0
    cli.pointer_of_another_host("far", "running")
    before = recorded(cli)
    for args, says in [
        (
            ["--name", "B", "--after", "nope"],
            "--after nope: no job or sweep of that name is recorded (dunscaith list shows them)",
        ),
        (
            ["--name", "B", "--after-any", "far"],
            "--after-any far: it is recorded on host login2, in that host's own store, where this job could never "
            "see its outcome: submit this job on login2, or share one store between the login nodes",
        ),
        (["--name", "B", "--after", "B"], "--after B: B would wait for itself, and so never start"),
        (
            ["--name", "B", "--after-each", "S"],
            "--after-each S: only a sweep (--array or --each) waits element by element",
        ),
        (["--name", "T", "--array", "0-2", "--after-each", "A"], "--after-each A: a job, not a sweep"),
        (
            ["--name", "T", "--array", "0-3", "--after-each", "S"],
            '--after-each S: "T" has 4 elements and "S" 3, not the same indices (index 3 is in "T" only)',
        ),
        (
            ["--name", "T", "--array", "0-2", "--after-each", "S", "--after", "S"],
            "--after-each S: given with --after too; a job waits for another one way only",
        ),
        (["--name", "B", "--after", "A", "--after", "A"], "--after A: given twice"),
        (["--name", "B", "--after", "a b"], "--after 'a b': use 1 to 63 letters"),
        (["--name", "S", "--array", "0-2", "--after", "S"], "--after S: S would wait for itself"),
    ]:
        line = one_line(cli.run("submit", *args, "--", "echo", "{}"))
        assert says in line, (args, line)
    assert recorded(cli) == before


def test_a_job_after_another_is_created_only_once_that_one_succeeded(cli: Cli) -> None:
    gate = cli.tmp / "go"
    first = cli.start("submit", "--name", "A", "--", "sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.1; done")
    second = first  # until it starts
    try:
        await_state(cli, "A", "running", 60)
        second = cli.start("submit", "--name", "B", "--after", "A", "--", "true")
        await_condition(
            lambda: second.stdout is not None and "waiting for A" in second.stdout.readline(),
            60,
            "B to say it waits for A",
        )
        assert "attempt 1" not in cli.run("events", "B").stdout  # nothing sent for B while A runs
        gate.touch()
        assert first.wait(60) == 0 and second.wait(60) == 0
    finally:
        gate.touch()  # A's job ends whatever happened above: no process of the test is left behind
        for process in (first, second):
            if process.poll() is None:
                process.kill()
            process.communicate()
    events = cli.run("events", "B").stdout
    assert "attempt 1" in events and ("B", "succeeded") in recorded(cli)


def test_a_job_after_one_that_failed_is_blocked_and_never_created(cli: Cli) -> None:
    assert cli.run("submit", "--name", "A", "--", "false").returncode == 1
    done = cli.run("submit", "--name", "B", "--after", "A", "--", "true")
    assert done.returncode == 1, done.stderr
    assert "job B: blocked by A (failed)" in done.stderr
    assert "attempt 1" not in cli.run("events", "B").stdout
