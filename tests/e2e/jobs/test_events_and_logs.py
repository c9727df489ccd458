"""``dunscaith events JOB`` (the record as a timeline) and ``logs --tail N`` / ``logs --all``, as a user runs
them: real processes, the local scheduler, SQLite (PostgreSQL and Slurm in test_postgres.py, test_slurm.py)."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli, await_condition, await_state

pytestmark = pytest.mark.slow

_LINE = re.compile(r"^  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  (\S+) +(.*)$")


def _timeline(stdout: str) -> list[tuple[str, str]]:
    """The headings as ("", heading) and each event line as (who, what), header line left out."""
    out = []
    for line in stdout.splitlines()[1:]:
        found = _LINE.match(line)
        out.append((found.group(1), found.group(2)) if found else ("", line))
    return out


def test_events_shows_each_decision_and_answer_in_order_with_who_acted_by_attempt(cli: Cli) -> None:
    supervisor = cli.start("submit", "--name", "ev", "--", "sleep", "120")
    try:
        await_state(cli, "ev", "running")
        assert cli.run("cancel", "ev").returncode == 0
        assert supervisor.wait(timeout=60) == 1
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
    done = cli.run("events", "ev")
    assert done.returncode == 0, done.stderr
    host = socket.gethostname()
    assert done.stdout.splitlines()[0] == (f"job ev: cluster local (local), submitted on host {host}, "
                                              f"recorded in {cli.root}")
    shown = _timeline(done.stdout)
    whos = [who for who, _ in shown]
    assert shown[0] == (f"submit@{host}",
                        f"recorded: sleep 120 (cluster local, local; at most 3 attempts, in {cli.tmp})")
    object_id = cli.status("ev")["attempts"][0]["object_id"]
    assert shown[1] == ("", f"attempt 1 (object {object_id})")
    assert shown[2][0] == f"supervisor@{host}" and shown[2][1].startswith("sends the create request, held (nonce ")
    assert shown[3] == ("scheduler", f"created {object_id}, held")
    assert (f"supervisor@{host}", f"released {object_id} (stdout {cli.status('ev')['stdout']}, stderr "
                                  f"{cli.status('ev')['stderr']})") in shown
    assert ("scheduler", f"{object_id} running") in shown
    request = whos.index(f"cancel@{host}")
    assert shown[request][1].startswith("asks to cancel (request ")
    assert shown[request + 1][0] == f"supervisor@{host}" and shown[request + 1][1].startswith("confirmed cancel")
    assert shown[-2][0] == f"supervisor@{host}" and shown[-2][1].startswith("outcome cancelled")
    assert shown[-1] == (f"supervisor@{host}", "settled: nothing outstanding")
    # --json: one object per line, the same events in the same order
    as_json = cli.run("events", "--json", "ev")
    assert as_json.returncode == 0, as_json.stderr
    objects = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [o["seq"] for o in objects] == list(range(1, len(objects) + 1))
    assert len(objects) == len([who for who in whos if who])
    assert objects[0]["kind"] == "job-recorded" and objects[0]["actor"] == "command"
    assert objects[0]["command"] == "submit" and objects[0]["host"] == host and objects[0]["attempt"] is None
    cancel = next(o for o in objects if o["kind"] == "request")
    assert (cancel["actor"], cancel["command"], cancel["attempt"], cancel["data"]["action"]) == (
        "command", "cancel", 1, "cancel")
    assert objects[-1]["kind"] == "settled"


def test_events_escapes_control_characters_and_refuses_what_is_not_there(cli: Cli) -> None:
    done = cli.run("submit", "--name", "ctl", "--", "sh", "-c", "echo '\x1b[31mred'\necho x")
    assert done.returncode == 0, done.stderr
    shown = cli.run("events", "ctl")
    assert shown.returncode == 0 and "\x1b" not in shown.stdout
    assert "\\x1b[31mred" in shown.stdout and "\\necho x'" in shown.stdout
    assert all(_LINE.match(line) or not line.startswith("  ") for line in shown.stdout.splitlines())
    missing = cli.run("events", "nosuch")
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr.strip().splitlines() == ["dunscaith: no job named nosuch is recorded"]
    as_json = cli.run("events", "--json", "nosuch")
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["error"]["code"] == "bad-input"


def test_events_of_another_hosts_job_is_forwarded_there(cli: Cli) -> None:
    cli.pointer_of_another_host("far", "running")
    done = cli.run("events", "far")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "could not connect to login2" in line and "nothing ran on login2" in line


def _lines(n: int) -> str:
    return "".join(f"{i}\n" for i in range(1, n + 1))


def test_logs_tail_and_all(cli: Cli) -> None:
    done = cli.run("submit", "--name", "out", "--", "sh", "-c", "seq 1 30; echo e1 >&2; echo e2 >&2")
    assert done.returncode == 0, done.stderr
    status = cli.status("out")
    assert cli.run("logs", "--tail", "3", "out").stdout == "28\n29\n30\n"
    assert cli.run("logs", "-n", "1", "--stderr", "out").stdout == "e2\n"
    assert cli.run("logs", "--tail", "100", "out").stdout == _lines(30)
    assert cli.run("logs", "--tail", "0", "out").stdout == ""
    # ended: --follow prints the last lines and returns
    assert cli.run("logs", "--tail", "2", "--follow", "out").stdout == "29\n30\n"
    both = cli.run("logs", "--all", "out")
    assert both.returncode == 0, both.stderr
    assert both.stdout == (f"==> stdout: {status['stdout']} <==\n{_lines(30)}\n"
                           f"==> stderr: {status['stderr']} <==\ne1\ne2\n")
    tailed = cli.run("logs", "--all", "--tail", "1", "out")
    assert tailed.stdout == f"==> stdout: {status['stdout']} <==\n30\n\n==> stderr: {status['stderr']} <==\ne2\n"
    for bad in (["--follow"], ["--stderr"]):
        refused = cli.run("logs", "--all", *bad, "out")
        assert (refused.returncode, refused.stdout) == (2, "")
        assert len(refused.stderr.strip().splitlines()) == 1 and bad[0] in refused.stderr
    negative = cli.run("logs", "--tail", "-1", "out")
    assert negative.returncode == 2 and "--tail" in negative.stderr
    os.remove(status["stderr"])
    gone = cli.run("logs", "--all", "out")
    assert gone.returncode == 2 and gone.stdout.startswith(f"==> stdout: {status['stdout']} <==\n{_lines(30)}")
    assert f"stderr {status['stderr']}" in gone.stderr


def test_logs_tail_follow_starts_from_the_last_lines_then_follows(cli: Cli) -> None:
    go = cli.tmp / "go"
    supervisor = cli.start("submit", "--name", "tf", "--", "sh", "-c",
                           f"seq 1 10; while [ ! -e {go} ]; do sleep 0.1; done; echo eleven")
    try:
        await_state(cli, "tf", "running")
        stdout = cli.status("tf")["stdout"]
        out = Path(stdout)
        await_condition(lambda: out.exists() and out.read_text() == _lines(10), what="ten lines")
        follow = cli.start("logs", "--tail", "2", "--follow", "tf")
        assert follow.stdout is not None
        assert follow.stdout.readline() == "9\n" and follow.stdout.readline() == "10\n"
        go.touch()
        rest, _ = follow.communicate(timeout=60)
        assert follow.returncode == 0 and rest == "eleven\n"
        assert supervisor.wait(timeout=60) == 0
    finally:
        go.touch()
        if supervisor.poll() is None:
            supervisor.kill()
