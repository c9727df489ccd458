"""Issue 22 items 16 and 18: every example in every qdevices --help runs as shown, against the fake site,
and `qdevices jobs` exits as its help says (one test per code).

RECORD and ID are the only placeholders: the record a live run printed after "Record:", and the job id
the site shows. The examples of a command run in the order shown, as one story in one HOME."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow

COMMANDS = ["send", "jobs", "resolve", "unlock", "check"]


def examples(cli: Cli, command: str) -> list[list[str]]:
    shown = cli.run(command, "--help")
    assert shown.returncode == 0, shown.stderr
    block = shown.stdout.split("Examples:", 1)[1].split("Exit codes:", 1)[0]
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    assert lines and all(line.startswith(f"qdevices {command}") for line in lines), lines
    return [line.split()[1:] for line in lines]


def run(cli: Cli, argv: list[str], record: str | None = None, job: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    words = [record if w == "RECORD" else job if w == "ID" else w for w in argv]
    assert None not in words, argv
    return cli.run(*words, LEXIS_TOKEN="lexis-" + "t" * 30)  # type: ignore[arg-type]


def recorded(done: subprocess.CompletedProcess[str]) -> str:
    found = re.search(r"^Record: (.+)$", done.stdout, re.MULTILINE)
    assert found, done.stdout + done.stderr
    return found.group(1)


def lose_one(cli: Cli) -> tuple[str, str]:
    """A new live run whose answer is lost after the site made the job: a lost order, and its job id."""
    before = set(cli.fake.jobs)
    cli.fake.script("submit", "drop_after_create")
    done = cli.run("send", "run.toml", "--live", "--max-order", "1")
    assert done.returncode == 2, done.stderr
    (job,) = set(cli.fake.jobs) - before
    return recorded(done), job


def test_every_send_and_jobs_example_runs_as_shown(cli: Cli) -> None:
    cli.manifest(orders=2, name="run")
    record = None
    for argv in examples(cli, "send"):
        done = run(cli, argv, record)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        if "--resume" not in argv and "--live" in argv:
            record = recorded(done)
    assert cli.posts_per_order() == {1: 1, 2: 1}
    for argv in examples(cli, "jobs"):
        done = run(cli, argv, record)
        assert done.returncode == 0 and "completed" in done.stdout, (argv, done.stdout, done.stderr)


def test_every_resolve_example_runs_as_shown(cli: Cli) -> None:
    cli.manifest(orders=2, name="run")
    for argv in examples(cli, "resolve"):
        record, job = lose_one(cli)
        done = run(cli, argv, record, job)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        if "--job" in argv:  # a resume collects the job found at the site
            assert cli.run("send", "run.toml", "--live", "--resume", record).returncode == 0


def test_every_unlock_and_check_example_runs_as_shown(cli: Cli) -> None:
    for command in ("unlock", "check"):
        for argv in examples(cli, command):
            done = run(cli, argv)
            assert done.returncode == 0, (argv, done.stdout, done.stderr)


def test_every_command_lists_its_own_exit_codes(cli: Cli) -> None:
    for command in COMMANDS:
        text = " ".join(cli.run(command, "--help").stdout.split())
        assert "Exit codes: 0" in text and "3 an error of the program" in text
    assert "128+n" in " ".join(cli.run("send", "--help").stdout.split())
    for command in ("jobs", "resolve", "unlock", "check"):
        assert "128+n" not in cli.run(command, "--help").stdout


def test_jobs_exits_0_when_every_order_is_final(cli: Cli) -> None:
    done = cli.run("send", str(cli.manifest(orders=1)), "--live")
    assert cli.run("jobs", recorded(done)).returncode == 0


def test_jobs_exits_1_while_an_order_is_open_or_not_sent(cli: Cli) -> None:
    manifest = str(cli.manifest(orders=2, wait=1))
    done = cli.run("send", manifest, "--live", "--max-order", "1")
    record = recorded(done)
    listed = cli.run("jobs", record, "--json")
    assert listed.returncode == 1 and '"state": "unsent"' in listed.stdout  # order 2 not sent yet
    cli.fake.path = ("PENDING",)  # order 2 never ends: it stays open
    cli.run("send", manifest, "--live", "--resume", record, "--max-order", "2")
    assert '"state": "open"' in cli.run("jobs", record, "--json").stdout
    assert cli.run("jobs", record).returncode == 1


def test_jobs_exits_2_for_a_lost_order_and_for_bad_input(cli: Cli) -> None:
    cli.manifest(orders=1, name="run")
    record, _ = lose_one(cli)
    listed = cli.run("jobs", record)
    assert listed.returncode == 2 and "lost" in listed.stdout
    assert cli.run("jobs", record, "--json").returncode == 2
    missing = cli.run("jobs", str(cli.tmp / "none.jsonl"))
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
