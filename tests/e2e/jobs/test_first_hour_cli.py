"""A researcher's first hour (issue 11), as a user runs it: where the output is, the job's resources, the
CLI's conventions. Real processes, SQLite, the local scheduler (and the real Slurm at the end)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shlex
import struct
import subprocess
import termios
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import DUNSCAITH, Cli

pytestmark = pytest.mark.slow

QDEVICES = str(Path(DUNSCAITH).parent / "qdevices")


def test_follow_streams_the_output_and_the_paths_are_in_the_record_status_list_and_logs(cli: Cli) -> None:
    done = cli.run("submit", "--follow", "--name", "hello", "--", "sh", "-c", "echo hi; echo oops >&2")
    assert done.returncode == 0, done.stderr
    assert "\nhi\n" in done.stdout and "oops" in done.stderr
    assert "\x1b" not in done.stdout + done.stderr  # piped: no escape code at all
    # every line of the live view is timestamped when piped
    view = [line for line in done.stdout.splitlines() if line.endswith(")") or "hello:" in line]
    assert view and all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", line) for line in view)
    status = cli.status("hello")
    stdout, stderr = status["stdout"], status["stderr"]
    assert Path(stdout).read_text() == "hi\n" and Path(stderr).read_text() == "oops\n"
    assert f"stdout: {stdout}" in done.stdout  # said at the release, and again with the outcome
    assert status["attempts"][0]["stdout"] == stdout
    times = status["times"]
    assert times["submitted"] <= times["started"] <= times["ended"] and status["elapsed_seconds"] >= 0
    assert stdout in cli.run("list", "--wide").stdout
    assert stdout not in cli.run("list").stdout
    assert json.loads(cli.run("list", "--json").stdout)["jobs"][0]["stdout"] == stdout
    plain = cli.run("status", "hello").stdout
    assert f"stdout: {stdout}" in plain and "submitted " in plain and "elapsed " in plain
    logs = cli.run("logs", "hello")
    assert (logs.returncode, logs.stdout) == (0, "hi\n")
    assert cli.run("logs", "--stderr", "hello").stdout == "oops\n"
    assert cli.run("logs", "--follow", "--attempt", "1", "hello").stdout == "hi\n"  # ended: prints and returns
    missing = cli.run("logs", "--attempt", "2", "hello")
    assert missing.returncode == 2 and "no attempt 2" in missing.stderr


def test_a_program_that_cannot_start_shows_its_reason_with_the_outcome(cli: Cli) -> None:
    done = cli.run("submit", "--name", "typo", "--", "no-such-prog")
    assert done.returncode == 1
    assert "last lines of its stderr" in done.stderr and "no-such-prog" in done.stderr, done.stderr


def test_resources_the_local_scheduler_cannot_honour_are_refused_before_anything_is_recorded(cli: Cli) -> None:
    import os

    too_many = str(len(os.sched_getaffinity(0)) + 1)
    for args, named in ((["-p", "debug"], "--partition"), (["--gpus", "1"], "--gpus"), (["-A", "x"], "--account"),
                        (["--qos", "q"], "--qos"), (["--export", "NONE"], "--export"),
                        (["--sbatch=--constraint=a"], "--constraint=a"), (["-c", too_many], f"{too_many} cpus")):
        done = cli.run("submit", *args, "--", "true")
        assert done.returncode == 2 and "local scheduler" in done.stderr and named in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
    assert json.loads(cli.run("list", "--json").stdout)["jobs"] == []


@pytest.mark.parametrize(("args", "says"), [
    (["-c", "0"], "--cpus-per-task '0': a whole number from 1"),
    (["-c", "abc"], "--cpus-per-task 'abc': a whole number from 1"),
    (["--mem", "abc"], "--mem 'abc': a size"),
    (["--mem", "10PB"], "--mem '10PB': a size"),
    (["-t", "abc"], "--time 'abc': a time limit"),
    (["-t", "0"], "--time '0': a time limit of at least 1 second"),
    (["--gpus", "0"], "--gpus '0': [TYPE:]COUNT"),
    (["-p", ""], "--partition '': 1 to 200"),
    (["-A", "a b"], "--account 'a b': 1 to 200"),
])
def test_needs_no_scheduler_could_honour_are_refused_in_one_line_before_anything_is_recorded(
        cli: Cli, args: list[str], says: str) -> None:
    """Issue 22 item 1: `-c 0` went to sbatch, whose refusal was read as unknown, and the job was tried
    three times over 30 minutes. Now the number, size or time is checked first, on every cluster."""
    done = cli.run("submit", *args, "--", "true")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == [f"dunscaith: {done.stderr.strip().removeprefix('dunscaith: ')}"]
    assert says in done.stderr, done.stderr
    assert json.loads(cli.run("list", "--json").stdout)["jobs"] == []


def test_the_local_scheduler_honours_cpus_memory_and_a_time_limit(cli: Cli) -> None:
    done = cli.run("submit", "--name", "limits", "-c", "1", "--mem", "64M", "--", "sh", "-c",
                   "python3 -c 'import os; print(len(os.sched_getaffinity(0)))'; ulimit -v")
    assert done.returncode == 0, done.stderr
    # the memory is a resident-memory limit the watchdog keeps (test_recovery_local.py): no address-space one
    unlimited = subprocess.run(["sh", "-c", "ulimit -v"], capture_output=True, text=True).stdout
    assert cli.run("logs", "limits").stdout == f"1\n{unlimited}"
    assert cli.status("limits")["spec"]["resources"] == ["cpus=1", "memory=64M"]
    assert "resources: cpus=1 memory=64M" in cli.run("status", "limits").stdout

    late = cli.run("submit", "--name", "late", "-t", "0:01", "--", "sh", "-c", "sleep 60 & sleep 60")
    assert late.returncode == 1, (late.stdout, late.stderr)
    assert "its time limit was reached" in late.stdout, late.stdout
    status = cli.status("late")
    assert [a["object_state"] for a in status["attempts"]] == ["timeout"]
    assert status["spec"]["resources"] == ["time=00:00:01"]


def test_env_and_chdir_reach_a_local_job_and_are_recorded(cli: Cli) -> None:
    work = cli.tmp / "work"
    work.mkdir()
    done = cli.run("submit", "--name", "env", "--env", "GREETING=hello there", "--chdir", str(work), "--",
                   "sh", "-c", 'echo "$GREETING"; pwd')
    assert done.returncode == 0, done.stderr
    assert cli.run("logs", "env").stdout == f"hello there\n{work}\n"
    status = cli.status("env")
    assert status["spec"]["workdir"] == str(work) and status["spec"]["env"] == ["GREETING"]  # names, never values
    assert "environment: GREETING" in cli.run("status", "env").stdout
    bad = cli.run("submit", "--env", "no-equals", "--", "true")
    assert bad.returncode == 2 and "NAME=VALUE" in bad.stderr
    gone = cli.run("submit", "--chdir", str(cli.tmp / "nowhere"), "--", "true")
    assert gone.returncode == 2 and "no such directory" in gone.stderr


@pytest.fixture
def with_slurm_config(cli: Cli) -> Cli:
    """A cluster of adapter slurm that is never reached: options are checked before anything is sent."""
    config = cli.tmp / "home" / ".config" / "dunscaith"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[clusters.hpc]\nadapter = "slurm"\nbin_dir = "/nonexistent"\n')
    return cli


@pytest.mark.parametrize("option", ["--hold", "-H", "--job-name=x", "-Jx", "--comment=x", "--parsable", "--wait",
                                    "-W", "--ho", "-va", "-vH", "-Qa", "--array=1-3", "--chdir=/tmp"])
def test_sbatch_options_dunscaith_owns_are_refused_however_spelt(with_slurm_config: Cli, option: str) -> None:
    done = with_slurm_config.run("submit", "--cluster", "hpc", f"--sbatch={option}", "--", "true")
    assert done.returncode == 2 and "is not allowed" in done.stderr, done.stderr
    assert json.loads(with_slurm_config.run("list", "--json").stdout)["jobs"] == []


def test_a_refusal_with_json_is_one_error_object_on_stdout_with_the_same_exit_code(cli: Cli) -> None:
    for args in (["status", "ghost", "--json"], ["hold", "ghost", "--json"], ["logs", "ghost"],
                 ["list", "--since", "whenever", "--json"]):
        done = cli.run(*args)
        assert done.returncode == 2 and done.stderr.startswith("dunscaith: "), (args, done.stderr)
        if "--json" in args:
            error = json.loads(done.stdout)["error"]
            assert error["exit_code"] == 2 and error["code"] and error["message"], error
        else:
            assert done.stdout == ""


def test_list_filters_by_state_cluster_and_time_newest_first(cli: Cli) -> None:
    cli.run("submit", "--name", "first", "--", "true")
    cli.run("submit", "--name", "second", "--", "false")
    cli.run("submit", "--name", "third", "--", "true")

    def names(*args: str) -> list[str]:
        done = cli.run("list", "--json", *args)
        assert done.returncode == 0, done.stderr
        return [j["job"] for j in json.loads(done.stdout)["jobs"]]

    assert names() == ["third", "second", "first"]
    assert names("--state", "succeeded") == ["third", "first"]
    assert names("--state", "failed") == ["second"]
    mars = {"DUNSCAITH_CLUSTERS__MARS__ADAPTER": "slurm"}  # configured, no job of it: nothing to list
    done = cli.run("list", "--json", "--cluster", "mars", env=mars)
    assert done.returncode == 0 and json.loads(done.stdout)["jobs"] == [], done.stderr
    assert cli.run("list", "--cluster", "mars").returncode == 2  # neither configured nor recorded: refused
    assert names("--since", "1h") == ["third", "second", "first"]
    assert names("--since", "2999-01-01") == []


def test_prune_outputs_removes_the_local_object_folders_only_when_asked(cli: Cli) -> None:
    cli.run("submit", "--name", "kept", "--", "true")
    cli.run("submit", "--name", "dropped", "--", "true")
    kept, dropped = (Path(cli.status(j)["stdout"]).parent for j in ("kept", "dropped"))
    assert cli.run("prune", "kept").returncode == 0
    assert kept.is_dir()  # never by default
    done = cli.run("prune", "dropped", "--outputs", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outputs_removed"] == [str(dropped)]
    assert not dropped.exists() and kept.is_dir()


def test_config_show_says_where_each_setting_came_from_and_config_path_names_the_file(cli: Cli) -> None:
    config = cli.tmp / "home" / ".config" / "dunscaith"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[recovery]\nattempts = 5\n")
    shown = json.loads(cli.run("config", "show", "--json").stdout)
    by = {row["setting"]: row for row in shown["settings"]}
    assert (by["recovery.attempts"]["value"], by["recovery.attempts"]["source"]) == (5, f"file {config}/config.toml")
    assert by["supervise.poll"]["source"] == "environment DUNSCAITH_SUPERVISE__POLL"
    assert by["commands.wait"]["source"] == "default"
    assert cli.run("config", "path").stdout.strip() == f"{config}/config.toml"


def _commands(binary: str, env: dict[str, str], *group: str) -> list[list[str]]:
    top = subprocess.run([binary, *group, "--help"], capture_output=True, text=True, env=env, check=True).stdout
    listed = top.split("Commands:")[1].splitlines()
    names = [line.split()[0] for line in listed if line.startswith("  ") and line.split()]
    found = []
    for name in names:
        if name in ("remote", "config"):
            found += _commands(binary, env, *group, name)
        else:
            found.append([*group, name])
    return found


@pytest.mark.parametrize("binary", [DUNSCAITH, QDEVICES])
def test_every_command_has_help_with_an_example_an_exit_code_epilog_and_clean_metavars(cli: Cli,
                                                                                       binary: str) -> None:
    env = cli.env()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and re.match(r"^(dunscaith|qdevices) \d", version.stdout)
    assert "--install-completion" in subprocess.run([binary, "-h"], capture_output=True, text=True,
                                                    env=env).stdout
    commands = _commands(binary, env)
    assert ["remote", "run"] in commands if binary == DUNSCAITH else ["send"] in commands
    for name in commands:
        shown = subprocess.run([binary, *name, "-h"], capture_output=True, text=True, env=env)
        assert shown.returncode == 0, (name, shown.stderr)
        text = shown.stdout
        assert "Examples:" in text and "Exit codes:" in text, (name, text)
        # a template left unfilled; a sweep's own placeholders ({}, {key}, {lr}) are what submit documents
        shown_text = re.sub(r"\{(key|lr|depth)\}", "", text) if name == ["submit"] else text
        assert not re.search(r"\{[A-Za-z]|\[\[|<[a-z]", shown_text), (name, text)


def _in_a_terminal(cli: Cli, *args: str, columns: int = 80) -> str:
    """Run dunscaith with a pseudo-terminal of ``columns`` columns as its stdout; what it wrote."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = cli.env(COLUMNS=str(columns), TERM="xterm")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([DUNSCAITH, *args], stdin=follower, stdout=follower, stderr=follower, env=env,
                            cwd=cli.tmp, close_fds=True)
    os.close(follower)
    out = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            piece = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not piece:
            break
        out += piece
    proc.wait(timeout=60)
    os.close(leader)
    return out.decode(errors="replace")


def test_list_of_nothing_prints_the_header_at_a_terminal_and_piped_and_json_its_empty_shape(cli: Cli) -> None:
    header = "NAME  STATE  CLUSTER  AGE  ELAPSED  SUPERVISOR  COMMAND"
    assert _in_a_terminal(cli, "list").strip() == header
    for args in (["list"], ["status"], ["list", "--state", "failed"]):  # the lean path, and typer's
        piped = cli.run(*args)
        assert piped.returncode == 0 and piped.stdout == header + "\n", (args, piped.stdout, piped.stderr)
    assert cli.run("list", "--noheader").stdout == ""
    assert json.loads(cli.run("list", "--json").stdout) == {"jobs": [], "damaged": [], "pointers": [],
                                                            "residual": []}


def test_at_a_terminal_of_80_columns_a_path_is_never_broken_by_a_newline(cli: Cli) -> None:
    text = _in_a_terminal(cli, "submit", "--name", "wide-enough-to-wrap-its-paths", "--", "true")
    path = cli.status("wide-enough-to-wrap-its-paths")["stdout"]
    assert len(path) > 80 and path in text, text


def test_no_color_at_a_terminal_means_no_escape_code_at_all(cli: Cli) -> None:
    leader, follower = pty.openpty()
    env = cli.env(NO_COLOR="1", TERM="xterm")
    proc = subprocess.run([DUNSCAITH, "submit", "--name", "plain", "--", "true"], stdin=follower, stdout=follower,
                          stderr=follower, env=env, cwd=cli.tmp, timeout=90)
    os.close(follower)
    out = b""
    while select.select([leader], [], [], 0.5)[0]:
        try:
            piece = os.read(leader, 4096)
        except OSError:
            break
        if not piece:
            break
        out += piece
    os.close(leader)
    assert proc.returncode == 0
    assert b"\x1b" not in out and b"outcome: succeeded" in out, out


def _readme_first_command() -> list[str]:
    """The arguments of the README's first command (``.venv/bin/dunscaith submit -- sh -c 'echo hi'``)."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith("python3 -m venv .venv && "))
    words = shlex.split(line.rsplit("&& ", 1)[1])
    assert words[0] == ".venv/bin/dunscaith", words
    return words[1:]


def _plain(text: str) -> str:
    """What a terminal shows of ``text``, near enough: escape codes and carriage returns dropped."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", text)


def test_the_readme_s_first_command_shows_the_job_s_name_and_what_it_printed_piped(cli: Cli) -> None:
    """Issue 38 item 6: twelve lifecycle lines and a path, but never ``hi``; now the job's name and the
    end of its output close what submit prints, with the command that shows all of it."""
    done = cli.run(*_readme_first_command())
    assert done.returncode == 0, done.stderr
    [job] = [j["job"] for j in json.loads(cli.run("list", "--json").stdout)["jobs"]]
    lines = done.stdout.splitlines()
    assert lines[-2:] == [f"job {job}: its stdout (dunscaith logs {job} shows it again):", "  hi"], lines
    assert "\x1b" not in done.stdout


def test_the_readme_s_first_command_shows_the_job_s_name_and_what_it_printed_at_a_terminal(cli: Cli) -> None:
    shown = _plain(_in_a_terminal(cli, *_readme_first_command()))
    [job] = [j["job"] for j in json.loads(cli.run("list", "--json").stdout)["jobs"]]
    lines = [line.rstrip() for line in shown.splitlines() if line.strip()]
    # after the status line is erased, what stays on screen names the job and shows its output
    assert lines[-2:] == [f"job {job}: its stdout (dunscaith logs {job} shows it again):", "  hi"], lines


def test_logs_without_a_job_is_the_newest_job_s_its_name_said_on_stderr(cli: Cli) -> None:
    none = cli.run("logs")
    assert none.returncode == 2 and none.stderr.startswith("dunscaith: no job is recorded here yet"), none.stderr
    for name, says in (("first", "one"), ("second", "two")):
        assert cli.run("submit", "--name", name, "--", "sh", "-c", f"echo {says}; echo {says}-err >&2").returncode == 0
    newest = cli.run("logs")
    assert (newest.returncode, newest.stdout, newest.stderr) == (0, "two\n", "dunscaith: the newest job: second\n")
    assert cli.run("logs", "--stderr").stdout == "two-err\n"
    assert cli.run("logs", "first").stdout == "one\n"


def test_a_long_output_is_cut_to_its_last_lines_saying_so_and_json_is_unchanged(cli: Cli) -> None:
    done = cli.run("submit", "--name", "long", "--", "sh", "-c", "seq 1 1000; echo careful >&2")
    assert done.returncode == 0, done.stderr
    tail = done.stdout.splitlines()[-13:]
    assert tail == ["job long: the last 10 lines of its stdout (all of it: dunscaith logs long):",
                    *[f"  {n}" for n in range(991, 1001)],
                    "job long: its stderr (dunscaith logs --stderr long shows it again):", "  careful"], tail
    as_json = cli.run("submit", "--json", "--name", "quiet", "--", "sh", "-c", "echo hi")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["job"] == "quiet"  # stdout: the object alone
    assert as_json.stderr.splitlines()[-2:] == ["job quiet: its stdout (dunscaith logs quiet shows it again):",
                                                "  hi"]
    followed = cli.run("submit", "--follow", "--name", "followed", "--", "sh", "-c", "echo once")
    assert followed.stdout.count("once") == 1 and "its stdout" not in followed.stdout  # shown as it came


@pytest.mark.slurm
def test_on_slurm_resources_reach_sbatch_are_recorded_and_logs_reads_scontrols_paths(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "sized", "-p", "debug", "-t", "5", "--mem", "20M",
                        "-c", "1", "--env", "WHO=slurm", "--", "sh", "-c", 'echo "hi $WHO"; echo warn >&2',
                        timeout=180)
    assert done.returncode == 0, (done.stdout, done.stderr)
    status = on_slurm.status("sized")
    # recorded as needs, in no scheduler's words; the Slurm adapter made them sbatch options
    assert status["spec"]["resources"] == ["cpus=1", "memory=20M", "time=00:05:00", "queue=debug"]
    assert status["spec"]["options"] == []
    assert status["stdout"] and "stdout: " in done.stdout
    assert "resources: cpus=1 memory=20M time=00:05:00 queue=debug" in on_slurm.run("status", "sized").stdout
    logs = on_slurm.run("logs", "sized")
    assert logs.returncode == 0 and "hi slurm" in logs.stdout, (logs.stdout, logs.stderr)
    refused = on_slurm.run("submit", "--cluster", "test", "--sbatch=-vH", "--", "true")
    assert refused.returncode == 2 and "-H" in refused.stderr


def test_follow_prints_the_output_of_a_job_that_ends_at_once_before_its_outcome(cli: Cli) -> None:
    lines = "".join(f"line {i}\\n" for i in range(200))
    done = cli.run("submit", "--follow", "--name", "quick", "--", "sh", "-c", f"printf '{lines}'; printf tail")
    assert done.returncode == 0, done.stderr
    out = done.stdout  # piped
    outcome = out.index("outcome: succeeded")
    assert all(out.index(f"line {i}\n") < outcome for i in (0, 199))
    assert out.index("tail") < outcome  # a last line without its newline too
    assert out.count("line 199\n") == 1 and out.count("tail") == 1  # drained once, never repeated at the end
