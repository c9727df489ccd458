"""Issue 38, each reproduction as a user meets it: submit's bad inputs, the job commands' --json refusals
and --version with more words. One clear line on stderr, exit 2, and nothing recorded (no store made)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.e2e.jobs.cli import Cli

pytestmark = pytest.mark.slow


def refused(cli: Cli, *args: str, timeout: float = 30) -> str:
    """The one line of a refused call; the store was not even made (nothing recorded)."""
    done = cli.run(*args, timeout=timeout)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dunscaith: "), done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert not (cli.root / "records.db").exists(), "a refused submit recorded something"
    return lines[0]


def test_a_script_and_a_command_after_dashes_are_refused_not_run_as_the_command(cli: Cli) -> None:
    (cli.tmp / "script.sh").write_text("echo hi\n")
    line = refused(cli, "submit", "script.sh", "--", "true")
    assert "give a SCRIPT or a command after --, not both" in line


def test_a_command_with_its_own_dashes_is_still_a_command(cli: Cli) -> None:
    done = cli.run("submit", "--name", "dd", "--json", "--", "sh", "-c", 'echo "$1"', "--", "x")
    assert done.returncode == 0, done.stderr
    recorded = json.loads(cli.run("events", "dd", "--json").stdout.splitlines()[0])
    assert recorded["data"]["command"] == ["sh", "-c", 'echo "$1"', "--", "x"]


def test_dev_zero_as_a_script_is_refused_at_once_not_read_without_end(cli: Cli) -> None:
    line = refused(cli, "submit", "/dev/zero")
    assert line == ("dunscaith: script /dev/zero: not a regular file (a pipe, a device...); give a script file, "
                    "or the command after --")


def test_a_fifo_nobody_writes_as_a_script_is_refused_never_waited_on(cli: Cli) -> None:
    os.mkfifo(cli.tmp / "fifo.sh")
    assert "script ./fifo.sh: not a regular file" in refused(cli, "submit", "./fifo.sh", timeout=20)


def test_a_directory_as_a_script_is_one_line(cli: Cli) -> None:
    assert refused(cli, "submit", ".") == ("dunscaith: script .: a directory; give a script file, or the command "
                                           "after --")


def test_a_script_larger_than_the_bound_is_refused(cli: Cli) -> None:
    big = cli.tmp / "big.sh"
    with big.open("wb") as f:
        f.truncate(4 * 1024 * 1024 + 1)
    assert "script big.sh: larger than 4 MiB" in refused(cli, "submit", "big.sh")


@pytest.mark.parametrize("text", ["", "\n  \n\t\n"])
def test_an_empty_script_is_refused(cli: Cli, text: str) -> None:
    (cli.tmp / "empty.sh").write_text(text)
    assert refused(cli, "submit", "empty.sh") == ("dunscaith: script empty.sh: the script has nothing in it (empty, "
                                                  "or blank lines only): there is nothing to run")


def test_a_script_of_windows_lines_is_recorded_as_before(cli: Cli) -> None:
    (cli.tmp / "crlf.sh").write_bytes(b"echo one\r\necho two\r\n")
    done = cli.run("submit", "--name", "crlf", "crlf.sh")
    assert done.returncode == 0, done.stderr
    recorded = json.loads(cli.run("events", "crlf", "--json").stdout.splitlines()[0])
    assert recorded["data"]["script"] == "echo one\necho two\n"


def test_an_env_name_given_twice_is_refused(cli: Cli) -> None:
    assert refused(cli, "submit", "--env", "A=1", "--env", "A=2", "--", "true") == (
        "dunscaith: --env A is given twice: give each variable once")


def test_61_minutes_in_a_time_limit_is_refused(cli: Cli) -> None:
    assert "minutes and seconds after a colon are 0 to 59" in refused(cli, "submit", "-t", "25:61:00", "--", "true")


def test_an_array_index_beyond_the_stores_integers_is_refused_not_an_internal_error(cli: Cli) -> None:
    line = refused(cli, "submit", "--name", "s11", "--array", "99999999999999999999", "--", "true")
    assert "is above 1,000,000,000, the largest index or step a sweep takes" in line


def test_job_exit_code_on_a_sweep_is_refused_not_ignored(cli: Cli) -> None:
    line = refused(cli, "submit", "--name", "sw", "--array", "0-1", "--job-exit-code", "--", "true")
    assert "--job-exit-code is one job's code, and a sweep has many" in line


def test_job_exit_code_on_supervise_of_a_sweep_is_refused(cli: Cli) -> None:
    assert cli.run("submit", "--name", "sw", "--array", "0-1", "--", "true").returncode == 0
    done = cli.run("supervise", "sw", "--job-exit-code")
    assert done.returncode == 2 and "--job-exit-code is one job's code, and sw is a sweep" in done.stderr


@pytest.mark.parametrize("words", [["--version", "extra"], ["--version", "--help"], ["--version", "list"]])
def test_version_takes_nothing_else(cli: Cli, words: list[str]) -> None:
    assert refused(cli, *words) == "dunscaith: --version takes nothing else: give it alone (--version), or drop it"


def test_version_alone_still_prints_it(cli: Cli) -> None:
    done = cli.run("--version")
    assert done.returncode == 0 and done.stdout.startswith("dunscaith ")


@pytest.mark.parametrize("action", ["hold", "release", "cancel", "give-up", "requeue", "resubmit"])
def test_a_request_refused_under_json_prints_the_object_and_its_line_on_stderr(cli: Cli, action: str) -> None:
    assert cli.run("submit", "--name", "j1", "--", "true").returncode == 0
    done = cli.run(action, "j1", "--json")
    assert done.returncode == 2, done.stderr
    body = json.loads(done.stdout)
    assert body["answer"] == "refused" and body["error"]["exit_code"] == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dunscaith: job j1: {action} refused by this command: ")
    assert body["detail"] in lines[0]


def test_a_sweep_request_refused_under_json_says_so_on_stderr(cli: Cli) -> None:
    assert cli.run("submit", "--name", "sw", "--array", "0-1", "--", "sh", "-c", "exit {}").returncode == 1
    done = cli.run("requeue", "sw", "--json")
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["exit_code"] == 2
    assert "dunscaith: sweep sw: requeue: 2 refused (already ended)" in done.stderr.splitlines(), done.stderr


def test_a_refused_submit_under_json_prints_the_error_object_and_the_line(cli: Cli) -> None:
    (cli.tmp / "script.sh").write_text("echo hi\n")
    done = cli.run("submit", "--json", "script.sh", "--", "true")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "bad-input" and done.stderr.count("\n") == 1


def test_nothing_is_left_waiting(cli: Cli) -> None:
    # a FIFO with a writer that never writes: still refused at once (never opened for a read that waits)
    fifo = cli.tmp / "held.sh"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"exec 3>'{fifo}'; sleep 30"])
    try:
        assert "not a regular file" in refused(cli, "submit", str(fifo), timeout=20)
    finally:
        writer.kill()
        writer.wait()
