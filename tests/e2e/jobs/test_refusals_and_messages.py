"""Issue 22 items 12 and 13, as a user meets them: what was accepted silently is refused in one line (exit 2,
nothing recorded), and every line says what, where and what to do, in plain words, with the user's own
values escaped and cut."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import DUNSCAITH, Cli

pytestmark = pytest.mark.slow


def one_line(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dunscaith: "), done.stderr
    return lines[0]


def _config(cli: Cli) -> Path:
    path = cli.tmp / "home" / ".config" / "dunscaith" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _nothing_recorded(cli: Cli) -> None:
    listed = cli.run("list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout)["jobs"] == [], listed.stdout


# --- item 12: accepted silently -------------------------------------------------------------------------

def test_list_of_an_unknown_state_is_refused_with_the_nearest_one(cli: Cli) -> None:
    assert cli.run("submit", "--name", "j1", "--", "false").returncode == 1
    line = one_line(cli.run("list", "--state", "faild"))
    assert line.startswith("dunscaith: --state 'faild': no job is ever in that state (did you mean failed?)")
    assert "the states are" in line and "running" in line
    assert one_line(cli.run("list", "--state", "bogus")).startswith("dunscaith: --state 'bogus'")
    listed = cli.run("list", "--state", "failed")
    assert listed.returncode == 0 and listed.stdout.splitlines()[1].split()[:2] == ["j1", "failed"]


def test_list_of_an_unknown_cluster_is_refused_but_a_recorded_one_still_lists(cli: Cli) -> None:
    line = one_line(cli.run("list", "--cluster", "locl"))
    assert line == ("dunscaith: --cluster 'locl': no such cluster is configured and no job of it is recorded "
                    "(did you mean local?); configured: local")
    assert one_line(cli.run("list", "--cluster", "nosuch", "--json")).startswith("dunscaith: --cluster 'nosuch'")
    assert cli.run("list", "--cluster", "local").returncode == 0


def test_poll_longer_than_poll_max_is_refused_naming_both(cli: Cli) -> None:
    line = one_line(cli.run("list", DUNSCAITH_SUPERVISE__POLL="100", DUNSCAITH_SUPERVISE__POLL_MAX="5"))
    assert "supervise.poll (100 s) is longer than supervise.poll_max (5 s)" in line
    assert "supervise: supervise.poll" not in line
    path = _config(cli)
    path.write_text("[supervise]\npoll = 100\npoll_max = 5\n")
    env = {"DUNSCAITH_SUPERVISE__POLL": "100"}
    line = one_line(cli.run("submit", "--", "true", env=env))
    assert "supervise.poll (100 s) is longer than supervise.poll_max (5 s)" in line
    _nothing_recorded(cli)


def test_a_relative_home_is_refused_and_nothing_is_written_under_the_current_directory(cli: Cli) -> None:
    work = cli.tmp / "work"
    work.mkdir()
    env = cli.env(HOME="relhome")
    done = subprocess.run([DUNSCAITH, "submit", "--name", "h1", "--", "true"], env=env, capture_output=True,
                          text=True, cwd=work, timeout=90)
    assert one_line(done).startswith("dunscaith: HOME is 'relhome', not an absolute path")
    assert os.listdir(work) == []
    listed = subprocess.run([DUNSCAITH, "list"], env=env, capture_output=True, text=True, cwd=work, timeout=90)
    assert one_line(listed).startswith("dunscaith: HOME is 'relhome'")


def test_a_dangling_configuration_link_is_refused_naming_it(cli: Cli) -> None:
    path = _config(cli)
    path.symlink_to(cli.tmp / "gone.toml")
    line = one_line(cli.run("list"))
    assert line == (f"dunscaith: configuration file {path} is a symbolic link to {cli.tmp / 'gone.toml'}, which "
                    "does not exist: point it at your configuration, or remove it to use the defaults")


def test_a_records_root_with_a_newline_is_refused_on_one_line(cli: Cli) -> None:
    line = one_line(cli.run("list", DUNSCAITH_RECORDS__ROOT=f"{cli.tmp}/r\nx"))
    assert line == (f"dunscaith: variable DUNSCAITH_RECORDS__ROOT: records.root: '{cli.tmp}/r\\nx' contains a "
                    "control character (a newline, a tab...): give the path without it")
    assert not (cli.tmp / "r\nx").exists()
    env = cli.env()
    env.pop("DUNSCAITH_RECORDS__ROOT")
    _config(cli).write_text('[records]\nroot = "/var/tmp/a\\nb"\n')
    done = subprocess.run([DUNSCAITH, "list"], env=env, capture_output=True, text=True, cwd=cli.tmp, timeout=90)
    assert "records.root: '/var/tmp/a\\nb' contains a control character" in one_line(done)


def test_a_relative_escalation_program_is_refused_and_a_bare_name_or_absolute_path_is_taken(cli: Cli) -> None:
    line = one_line(cli.run("list", DUNSCAITH_ESCALATIONS__COMMAND='["./notify", "x"]'))
    assert line == ("dunscaith: variable DUNSCAITH_ESCALATIONS__COMMAND: escalations.command: the program "
                    "'./notify' is relative to whatever folder a supervisor starts in: give its absolute path, "
                    "or a bare name found on PATH")
    _config(cli).write_text('[escalations]\ncommand = ["bin/notify"]\n')
    assert "'bin/notify' is relative" in one_line(cli.run("list"))
    _config(cli).write_text('[escalations]\ncommand = ["/usr/bin/logger"]\n')
    assert cli.run("list").returncode == 0
    assert cli.run("list", DUNSCAITH_ESCALATIONS__COMMAND='["logger"]').returncode == 0


def test_a_pointers_folder_that_is_a_file_refuses_submit_before_anything_is_recorded(cli: Cli) -> None:
    jobs = cli.tmp / "home" / ".config" / "dunscaith" / "jobs"
    jobs.parent.mkdir(parents=True)
    jobs.write_text("")
    line = one_line(cli.run("submit", "--name", "p1", "--", "true"))
    assert line == (f"dunscaith: the folder of pointers cannot be used: {jobs} is not a directory; nothing was "
                    "recorded: every login node finds a job by its pointer there, so fix that folder, then "
                    "submit again")
    _nothing_recorded(cli)


def test_a_pointer_that_stops_being_writable_while_a_job_runs_is_said_once(cli: Cli) -> None:
    jobs = cli.tmp / "home" / ".config" / "dunscaith" / "jobs"
    # the folder goes once the job runs and its pointer says so: removed during that write, the staging file
    # would vanish under it (a second, different line) rather than the folder be found not to be one
    script = f"sleep 1 && rm -rf {jobs} && touch {jobs} && sleep 1"
    done = cli.run("submit", "--name", "p2", "--", "sh", "-c", script)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "pointer of p2" in line]
    assert len(said) == 1, done.stderr
    assert said[0] == (f"dunscaith: pointer of p2 not updated: pointer of job p2 cannot be written: {jobs} is not a "
                       "directory (said once; the record is kept as always, and other login nodes see the "
                       "pointer's last state)")
    assert "PointerError" not in done.stderr


# --- item 13: messages ----------------------------------------------------------------------------------

def test_a_ten_thousand_character_name_is_cut_in_the_message(cli: Cli) -> None:
    line = one_line(cli.run("submit", "--name", "a" * 10_000, "--", "true"))
    assert len(line) < 300 and "(10000 characters)" in line and line.startswith("dunscaith: job name 'aaa")
    _nothing_recorded(cli)


@pytest.mark.parametrize("command", [["status"], ["hold"], ["logs"], ["supervise"], ["prune"]])
def test_a_job_name_with_a_newline_or_an_escape_is_echoed_escaped_on_one_line(cli: Cli, command: list[str]) -> None:
    line = one_line(cli.run(*command, "seed\nx"))
    assert "seed\\nx" in line, line
    line = one_line(cli.run(*command, "\x1b[31mred"))
    assert "\x1b" not in line and "\\x1b[31mred" in line


def test_library_wording_is_plain_words(cli: Cli) -> None:
    assert one_line(cli.run("list", DUNSCAITH_SUPERVISE__POLL="abc")) == (
        "dunscaith: variable DUNSCAITH_SUPERVISE__POLL: supervise.poll: must be a number, not 'abc'")
    assert one_line(cli.run("list", "--limit", "x")) == (
        "dunscaith: Invalid value for '--limit': must be a whole number, not 'x'")
    assert one_line(cli.run("list", DUNSCAITH_RECORDS__BACKEND="sqlit")) == (
        "dunscaith: variable DUNSCAITH_RECORDS__BACKEND: records.backend: must be 'sqlite' or 'postgresql', "
        "not 'sqlit' (did you mean sqlite?)")
    _config(cli).write_text("[recovery]\nattempts = 0\n")
    assert one_line(cli.run("list")).endswith("recovery.attempts: must be at least 1, not 0")
    for done in (cli.run("list", "--limit", "x"), cli.run("list", DUNSCAITH_SUPERVISE__POLL="abc")):
        assert "Input should" not in done.stderr and "unable to parse" not in done.stderr


def test_a_record_root_you_cannot_write_is_said_without_exception_names(cli: Cli) -> None:
    blocked = cli.tmp / "blocked"
    blocked.write_text("")  # a file where the root's parent should be a folder
    done = cli.run("list", DUNSCAITH_RECORDS__ROOT=str(blocked / "records"))
    line = one_line(done)
    assert "Error" not in line and "[Errno" not in line, line


@pytest.mark.parametrize(("typo", "meant"), [("sumbit", "submit"), ("stauts", "status"), ("lst", "list"),
                                              ("doctr", "doctor")])
def test_a_misspelt_command_gets_did_you_mean(cli: Cli, typo: str, meant: str) -> None:
    line = one_line(cli.run(typo))
    assert line.startswith(f"dunscaith: No such command '{typo}'. Did you mean '{meant}'")


def test_a_misspelt_option_gets_the_nearest_options(cli: Cli) -> None:
    line = one_line(cli.run("submit", "--nme", "x", "--", "true"))
    assert "--nme" in line and "--name" in line


# --- item 18: config show ---------------------------------------------------------------------------------

def test_config_show_gives_the_transport_in_effect_not_null(cli: Cli) -> None:
    shown = cli.run("config", "show")
    assert shown.returncode == 0
    line = next(row for row in shown.stdout.splitlines() if row.startswith("forwarding.transport"))
    assert '"openssh"' in line and "default" in line and "null" not in line
    rows = json.loads(cli.run("config", "show", "--json").stdout)["settings"]
    assert next(r for r in rows if r["setting"] == "forwarding.transport")["value"] == "openssh"
    chosen = cli.run("config", "show", DUNSCAITH_FORWARDING__TRANSPORT="paramiko").stdout
    assert '"paramiko"  (environment DUNSCAITH_FORWARDING__TRANSPORT)' in chosen


def test_config_show_gives_where_the_scheduler_state_is_not_null(cli: Cli) -> None:
    """Issue 37: scheduler_state.root unset is records.root's folder, and config show says so."""
    rows = json.loads(cli.run("config", "show", "--json").stdout)["settings"]
    row = next(r for r in rows if r["setting"] == "scheduler_state.root")
    assert (row["value"], row["source"]) == (str(cli.root), "default: records.root")
    apart = json.loads(cli.run("config", "show", "--json", DUNSCAITH_SCHEDULER_STATE__ROOT=str(cli.tmp / "s")).stdout)
    row = next(r for r in apart["settings"] if r["setting"] == "scheduler_state.root")
    assert (row["value"], row["source"]) == (str(cli.tmp / "s"), "environment DUNSCAITH_SCHEDULER_STATE__ROOT")


# --- issue 38 item 2: no password in config show --------------------------------------------------------------

@pytest.mark.parametrize("url", ["postgresql://alice:hunter2@db.example/jobs",
                                 "postgresql://alice@db.example:5432/jobs?sslmode=require&password=hunter2"])
def test_config_show_masks_a_password_in_records_url_and_says_where_it_belongs(cli: Cli, url: str) -> None:
    settings = {"DUNSCAITH_RECORDS__BACKEND": "postgresql", "DUNSCAITH_RECORDS__URL": url}
    shown, as_json = cli.run("config", "show", env=settings), cli.run("config", "show", "--json", env=settings)
    assert shown.returncode == 0 and as_json.returncode == 0, shown.stderr + as_json.stderr
    for done in (shown, as_json):
        assert "hunter2" not in done.stdout + done.stderr
    line = next(row for row in shown.stdout.splitlines() if row.startswith("records.url"))
    assert "***" in line and "~/.pgpass" in line, line
    row = next(r for r in json.loads(as_json.stdout)["settings"] if r["setting"] == "records.url")
    assert row["value"] == url.replace("hunter2", "***") and "~/.pgpass" in row["source"]
    refused = cli.run("list", env=settings)  # every command that opens the store refuses it, as before
    assert refused.returncode == 2 and "hunter2" not in refused.stdout + refused.stderr
