"""Issue 10, each reproduction as a user meets it: a private HOME, the real ``dunscaith``, one clear line.

Never lost, even on bad input: an empty or relative root, a damaged store, configuration mistakes,
damaged pointers and residual entries, and inputs that used to end in an internal error (exit 3).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import DUNSCAITH, Cli
from tests.infra.sqlite_pages import drop_last_cells, event_pages, zero_pages

pytestmark = pytest.mark.slow


def one_line(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("dunscaith: ")]
    assert lines, done.stderr
    return lines[0]


def config(cli: Cli, text: str) -> Path:
    path = cli.tmp / "home" / ".config" / "dunscaith" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run_in(cli: Cli, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = cli.env(**env)
    for name in [k for k, v in env.items() if v is None]:
        environment.pop(name, None)
    return subprocess.run([DUNSCAITH, *args], env=environment, capture_output=True, text=True, timeout=90,
                          cwd=cwd)


def submitted(cli: Cli, *names: str) -> None:
    for name in names:
        done = cli.run("submit", "--name", name, "--", "sh", "-c", "echo " + "p" * 400)
        assert done.returncode == 0, done.stderr


# --- the record root ------------------------------------------------------------------------------------

def test_empty_root_variable_in_a_group_shared_folder_is_refused_and_the_folder_untouched(cli: Cli) -> None:
    project = cli.tmp / "project"
    project.mkdir()
    os.chmod(project, 0o2775)
    done = run_in(cli, project, "list", DUNSCAITH_RECORDS__ROOT="")
    assert one_line(done) == ("dunscaith: variable DUNSCAITH_RECORDS__ROOT: records.root: is empty: "
                              "give an absolute path")
    assert os.listdir(project) == [] and stat.S_IMODE(os.stat(project).st_mode) == 0o2775


def test_empty_root_in_the_toml_is_refused_naming_the_file(cli: Cli) -> None:
    path = config(cli, '[records]\nroot = ""\n')
    env = cli.env()
    env.pop("DUNSCAITH_RECORDS__ROOT")
    before = sorted(os.listdir(cli.tmp))
    done = subprocess.run([DUNSCAITH, "list"], env=env, capture_output=True, text=True, cwd=cli.tmp, timeout=90)
    assert one_line(done) == f"dunscaith: configuration file {path}: records.root: is empty: give an absolute path"
    assert sorted(os.listdir(cli.tmp)) == before  # the current directory was not made a root


def test_tilde_root_in_the_toml_is_the_home_not_a_literal_tilde_folder(cli: Cli) -> None:
    config(cli, '[records]\nroot = "~/dunscaith-records"\n')
    env = cli.env()
    env.pop("DUNSCAITH_RECORDS__ROOT")
    done = subprocess.run([DUNSCAITH, "submit", "--name", "t1", "--", "true"], env=env, capture_output=True,
                          text=True, cwd=cli.tmp, timeout=90)
    assert done.returncode == 0, done.stderr
    assert (cli.tmp / "home" / "dunscaith-records" / "HOST").exists()
    assert not (cli.tmp / "~").exists()


@pytest.mark.parametrize(("make", "says"), [
    (lambda base: base / ("n" * 256) / "r", "is 256 bytes long, and a file name may be at most 255"),
    (lambda base: base.joinpath(*["d"] * 2100), "bytes long, and the system takes at most 4095"),
    (lambda base: (base / "file").joinpath("r"), "is not a directory"),
    (lambda base: base / "loop1" / "r", "(Too many levels of symbolic links)"),
], ids=["part-over-255", "over-PATH_MAX", "ENOTDIR", "ELOOP"])
@pytest.mark.parametrize("where", ["variable", "file"])
def test_a_root_no_system_call_can_take_is_one_line_exit_2_and_nothing_is_made(
        cli: Cli, make: Callable[[Path], Path], says: str, where: str) -> None:
    """Issue 22 item 8: ``internal error: OSError: [Errno 36] File name too long``, exit 3."""
    base = cli.tmp / "base"
    base.mkdir()
    (base / "file").write_text("")
    os.symlink("loop2", base / "loop1")
    os.symlink("loop1", base / "loop2")
    root = make(base)
    env = cli.env()
    if where == "variable":
        env["DUNSCAITH_RECORDS__ROOT"] = str(root)
    else:
        env.pop("DUNSCAITH_RECORDS__ROOT")
        config(cli, f"[records]\nroot = {json.dumps(str(root))}\n")
    for args in (["list"], ["status", "j1"], ["submit", "--", "true"]):
        done = subprocess.run([DUNSCAITH, *args], env=env, capture_output=True, text=True, cwd=cli.tmp, timeout=90)
        line = one_line(done)
        assert line.startswith("dunscaith: record root ") and says in line, line
        assert len(line) < 600, line  # a 4 kB path is not echoed whole
    assert sorted(os.listdir(base)) == ["file", "loop1", "loop2"]


def test_relative_root_is_refused_so_jobs_never_follow_the_current_directory(cli: Cli) -> None:
    done = cli.run("list", DUNSCAITH_RECORDS__ROOT="relative/root")
    assert "'relative/root' is relative: give an absolute path" in one_line(done)
    assert not (cli.tmp / "relative").exists()


def test_a_private_folder_with_other_files_is_not_taken_over(cli: Cli) -> None:
    mine = cli.tmp / "mine"
    mine.mkdir(mode=0o700)
    (mine / "thesis.tex").write_text("x")
    done = cli.run("list", DUNSCAITH_RECORDS__ROOT=str(mine))
    assert "is not a record root" in one_line(done)
    assert os.listdir(mine) == ["thesis.tex"]


# --- a damaged store ------------------------------------------------------------------------------------

def test_empty_records_db_is_refused_and_nothing_is_written_over_it(cli: Cli) -> None:
    submitted(cli, "j1")
    (cli.root / "records.db").write_bytes(b"")  # : > records.db
    for args in (["list"], ["status", "j1"], ["submit", "--name", "j2", "--", "true"]):
        line = one_line(cli.run(*args))
        assert f"record store {cli.root / 'records.db'} is empty (0 bytes); nothing was written to it" in line
    assert (cli.root / "records.db").stat().st_size == 0
    assert (cli.tmp / "home" / ".config" / "dunscaith" / "jobs" / "j1").exists()


def test_zeroed_page_damages_one_job_list_status_prune_exit_2_and_others_still_list(cli: Cli) -> None:
    submitted(cli, "j1", "j2", "j3")
    db = cli.root / "records.db"
    zero_pages(db, event_pages(db, "overflow")[:4])  # dd if=/dev/zero over the first job's event data
    listing = cli.run("list")
    assert listing.returncode == 0, listing.stderr
    assert "internal error" not in listing.stderr
    damaged = [line for line in listing.stdout.splitlines() if "damaged" in line]
    assert damaged, listing.stdout
    for job in ("j1", "j2", "j3"):
        assert job in listing.stdout
    for job in [line.split()[0] for line in damaged]:
        for args in (["status", job], ["prune", job]):
            done = cli.run(*args)
            assert "damaged" in one_line(done) or "integrity check" in done.stderr
            assert done.stderr.count("\n") == 1, done.stderr  # one line, whatever SQLite found
    doctor = cli.run("doctor")
    assert doctor.returncode == 1 and "PROBLEM  job " in doctor.stdout, doctor.stdout


def test_a_damaged_page_that_loses_a_records_last_events_is_said_per_job_never_held_or_supervise_it(
        cli: Cli) -> None:
    """Issue 38 item 4: SQLite reads a leaf page whose cell count was hit as fewer rows, without an error;
    a succeeded job's record then folded to an earlier state, listed Unattended ("supervise it")."""
    done = cli.run("submit", "--name", "lost", "--", "true")
    assert done.returncode == 0, done.stderr
    db = cli.root / "records.db"
    drop_last_cells(db, event_pages(db, "leaf")[-1], 2)  # its outcome and its settling: gone, silently
    # how many events the job has depends on what the scheduler was seen doing (a running state or not):
    # the two last are gone, and the line says where the record ends and what its summary counts
    found = re.search(r"damaged at event (\d+): its record ends at event (\d+) but its summary counts (\d+) events",
                      cli.run("list").stdout)
    assert found is not None
    damaged_at, ends_at, counted = (int(n) for n in found.groups())
    assert (damaged_at, ends_at) == (counted - 1, counted - 2), found.group(0)
    said = found.group(0)
    for args in (["list"], ["status"]):
        listing = cli.run(*args)
        assert listing.returncode == 0, listing.stderr  # a listing lists the damage (docs/exit-codes.md)
        assert f"lost  damaged: record does not read: {said}" in listing.stdout, listing.stdout
        assert "Unattended" not in listing.stdout + listing.stderr and "supervise" not in listing.stderr
    as_json = json.loads(cli.run("list", "--json").stdout)
    assert as_json["jobs"] == [] and [d["job"] for d in as_json["damaged"]] == ["lost"]
    for args in (["status", "lost"], ["status", "lost", "--json"], ["events", "lost"]):
        read = cli.run(*args)
        assert read.returncode == 2 and said in read.stderr, (args, read.stdout, read.stderr)
        assert "held" not in read.stdout + read.stderr and "Unattended" not in read.stdout + read.stderr


# --- configuration --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "says"), [
    ('[record]\nroot = "/var/tmp/x"\n', "unknown table [record] (did you mean [records]?)"),
    ("[supervize]\npoll = 1\n", "unknown table [supervize] (did you mean [supervise]?)"),
    ("recods = 1\n", "recods: unknown key (did you mean records?)"),
    ("[supervise]\npoll = true\n", "supervise.poll: a number, not true/false"),
    ("[supervise]\npoll = inf\n", "supervise.poll: a finite number"),
    ("[supervise]\npoll = 1e300\n", "supervise.poll: at most 2592000 seconds"),
    ('[clusters.local]\nadapter = "slurm"\n', "the cluster local is built in"),
])
def test_configuration_mistakes_are_refused_before_anything_is_recorded(cli: Cli, text: str, says: str) -> None:
    path = config(cli, text)
    done = cli.run("submit", "--name", "c1", "--", "true")
    assert one_line(done).startswith(f"dunscaith: configuration file {path}: ")
    assert says in done.stderr
    assert not cli.root.exists()  # nothing recorded: no job "recorded, Unattended" left behind


def test_config_toml_that_is_a_directory_is_refused(cli: Cli) -> None:
    (cli.tmp / "home" / ".config" / "dunscaith" / "config.toml").mkdir(parents=True)
    assert "config.toml is a directory, not a TOML file" in one_line(cli.run("list"))


def test_clusters_notjson_is_blamed_on_the_variable_not_the_file(cli: Cli) -> None:
    line = one_line(cli.run("list", DUNSCAITH_CLUSTERS="notjson"))
    assert line.startswith("dunscaith: variable DUNSCAITH_CLUSTERS does not parse") and "config.toml" not in line


def test_misspelt_variable_is_refused_with_the_nearest_name(cli: Cli) -> None:
    line = one_line(cli.run("list", DUNSCAITH_SUPERVISE__POL="3"))
    assert "DUNSCAITH_SUPERVISE__POL names no setting (did you mean DUNSCAITH_SUPERVISE__POLL?)" in line


def test_the_slurm_keys_docs_list_are_accepted(cli: Cli) -> None:
    config(cli, '[clusters.big]\nadapter = "slurm"\naccounting_lookback = 86400\n'
                "submit_timeout_unknown_floor = 300\n")
    done = cli.run("list")
    assert done.returncode == 0, done.stderr


# --- inputs that were internal errors -------------------------------------------------------------------

def test_submit_from_a_deleted_current_directory_is_one_line_exit_2(cli: Cli) -> None:
    gone = cli.tmp / "gone"
    gone.mkdir()
    process = subprocess.Popen(["sh", "-c", f'cd "{gone}" && rmdir "{gone}" && exec "$0" submit --name d1 -- true',
                                DUNSCAITH], env=cli.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate(timeout=90)
    done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    assert "current directory" in one_line(done)
    assert cli.run("status", "d1").returncode == 2  # nothing recorded


def test_prune_older_than_999999999w_is_one_line_exit_2(cli: Cli) -> None:
    assert "longer than 100 years" in one_line(cli.run("prune", "--older-than", "999999999w"))


# --- damaged pointers and residual entries --------------------------------------------------------------

@pytest.mark.parametrize("content", [b"garbage\n", bytes(range(256)) * 4, b"x" * 200_000, None],
                         ids=["garbage", "binary", "200KB", "directory"])
def test_damaged_pointer_is_listed_as_damaged_in_list_and_status(cli: Cli, content: bytes | None) -> None:
    submitted(cli, "j1")
    pointer = cli.tmp / "home" / ".config" / "dunscaith" / "jobs" / "j1"
    pointer.unlink()
    if content is None:
        pointer.mkdir()
    else:
        pointer.write_bytes(content)
        pointer.chmod(0o600)
    listing = cli.run("list")
    assert listing.returncode == 0, listing.stderr
    assert "pointer of job j1" in listing.stdout + listing.stderr and "damaged" in listing.stdout + listing.stderr
    status = cli.run("status", "j1")
    assert status.returncode == 0, status.stderr
    assert "pointer of job j1" in status.stderr
    as_json = json.loads(cli.run("list", "--json").stdout)
    assert any(row.get("job") == "j1" and row.get("what") == "pointer" and "pointer" in str(row.get("problem", ""))
               for row in as_json["damaged"])


def test_damaged_residual_entry_is_listed_as_damaged(cli: Cli) -> None:
    entry = cli.tmp / "home" / ".config" / "dunscaith" / "residual" / "j7" / "k1"
    entry.parent.mkdir(parents=True, mode=0o700)
    entry.write_bytes(b"\xff not an entry")
    entry.chmod(0o600)
    listing = cli.run("list")
    assert listing.returncode == 0, listing.stderr
    assert "j7  damaged residual entry k1: " in listing.stdout
    rows = json.loads(cli.run("list", "--json").stdout)["damaged"]
    assert [(r["job"], r["key"]) for r in rows if r["what"] == "residual entry"] == [("j7", "k1")]


# --- doctor ---------------------------------------------------------------------------------------------

def test_doctor_on_a_healthy_root_exits_0(cli: Cli) -> None:
    submitted(cli, "j1")
    done = cli.run("doctor")
    assert done.returncode == 0, done.stderr
    assert "store" in done.stdout


def test_doctor_reports_an_empty_store_and_the_pointers_it_cannot_check(cli: Cli) -> None:
    submitted(cli, "j1")
    (cli.root / "records.db").write_bytes(b"")
    done = cli.run("doctor")
    assert done.returncode == 1, done.stderr
    assert "is empty (0 bytes)" in done.stdout and "j1" in done.stdout
    assert (cli.root / "records.db").stat().st_size == 0


def test_doctor_lists_pointers_naming_jobs_the_store_does_not_know(cli: Cli) -> None:
    """The store restored from an older copy: a job recorded since is named by its pointer only. (A store
    simply gone is never made anew while pointers name it: test_store_where_pointers_name.py.)"""
    files = ("records.db", "records.db-wal", "records.db-shm")
    assert cli.run("status", "none").returncode == 2  # the store, made while no job is recorded (list makes none)
    older = cli.tmp / "older"
    older.mkdir()
    for name in files:
        if (cli.root / name).exists():
            shutil.copy2(cli.root / name, older / name)
    submitted(cli, "j1")
    for name in files:
        (cli.root / name).unlink(missing_ok=True)
        if (older / name).exists():
            shutil.copy2(older / name, cli.root / name)
    submitted(cli, "j2")
    done = cli.run("doctor")
    assert done.returncode == 1, done.stderr
    assert "pointer j1" in done.stdout and "which the store does not know" in done.stdout
    assert "pointer j2" not in done.stdout


def test_stop_emergency_on_a_fresh_root_then_submit_still_uses_it(cli: Cli) -> None:
    stop = cli.run("stop", "--emergency", "nothing-yet")  # opens no store: makes the local scheduler's folder
    assert stop.returncode in (0, 1), stop.stderr
    done = cli.run("submit", "--name", "after", "--", "true")
    assert done.returncode == 0, done.stderr


# --- an empty path argument: never read as the current directory ----------------------------------------

def test_an_empty_script_or_chdir_is_named_in_one_line_and_nothing_is_recorded(cli: Cli) -> None:
    assert one_line(cli.run("submit", "")) == "dunscaith: SCRIPT is empty: give a path (an unset shell variable?)"
    assert one_line(cli.run("submit", "--chdir", "", "--", "true")) == (
        "dunscaith: --chdir is empty: give a path (an unset shell variable?)")
    listed = cli.run("list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout)["jobs"] == [], listed.stdout


def test_an_empty_program_is_refused_before_anything_is_recorded(cli: Cli) -> None:
    """Issue 22 item 9: ``submit -- ''`` was recorded and run, its stderr execve's traceback."""
    for argv in (["--", ""], ["--", "", "x"], ["--name", "e1", "--", ""]):
        assert one_line(cli.run("submit", *argv)) == (
            "dunscaith: the program to run is empty ('' after --): give a program's name or path")
    listed = cli.run("list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout)["jobs"] == [], listed.stdout
    assert not (cli.root / "local-scheduler").exists() or os.listdir(cli.root / "local-scheduler") == []


def refused_folder_line(cli: Cli, folder: Path, mode: int = 0o755) -> str:
    return (f"dunscaith: record root {cli.root} cannot be used: {folder} is open to others (mode {mode:04o}) and "
            f"dunscaith never changes the mode of a directory it did not create; if it is yours alone, chmod 700 "
            f"{folder}; set records.root (environment: DUNSCAITH_RECORDS__ROOT) to a directory of your own")


def recorded_jobs(cli: Cli) -> list[str]:
    done = cli.run("list", "--json")
    assert done.returncode == 0, done.stderr
    return sorted(job["job"] for job in json.loads(done.stdout)["jobs"])


def test_an_open_local_scheduler_folder_is_refused_never_re_moded_and_the_job_is_not_lost(cli: Cli) -> None:
    assert cli.run("submit", "--name", "first", "--", "true").returncode == 0  # makes the root and its folders
    folder = cli.root / "local-scheduler"
    os.chmod(folder, 0o755)
    done = cli.run("submit", "--name", "second", "--", "true")
    assert one_line(done) == refused_folder_line(cli, folder)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755
    os.chmod(folder, 0o700)  # the fix the line gives: the job was refused before it was recorded
    assert recorded_jobs(cli) == ["first"]
    assert cli.status("first")["outcome"]["result"] == "succeeded"  # what was recorded is kept
    again = cli.run("submit", "--name", "second", "--", "true")
    assert again.returncode == 0, again.stderr
    assert cli.status("second")["outcome"]["result"] == "succeeded"


@pytest.mark.parametrize("open_part", ["slurm-queries", "slurm-queries/big", "slurm-queries/big/wanted"])
def test_an_open_slurm_queries_folder_is_refused_before_the_job_is_recorded(cli: Cli, open_part: str) -> None:
    config(cli, '[clusters.big]\nadapter = "slurm"\nbin_dir = "/nonexistent/slurm/bin"\n')
    assert cli.run("submit", "--name", "first", "--", "true").returncode == 0
    folder = cli.root / open_part
    queries = cli.root / "slurm-queries"
    for each in [queries, queries / "big", queries / "big" / "wanted"]:
        each.mkdir()
        os.chmod(each, 0o755 if each == folder else 0o700)
    done = cli.run("submit", "--cluster", "big", "--name", "second", "--", "true")
    assert one_line(done) == refused_folder_line(cli, folder)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755
    assert recorded_jobs(cli) == ["first"]


def test_an_open_settings_cache_folder_warns_once_and_the_command_goes_on(cli: Cli) -> None:
    cache = cli.tmp / "home" / ".cache" / "dunscaith"
    cache.mkdir(parents=True, mode=0o700)
    os.chmod(cache, 0o755)
    cli.pointer_of_another_host("far", "running")  # routing reads the remembered settings
    done = cli.run("hold", "far")
    assert done.returncode == 2 and "could not connect to login2" in done.stderr, done.stderr
    assert [line for line in done.stderr.splitlines() if "warning" in line] == [
        f"dunscaith: warning: the routing settings are not remembered: {cache} is open to others (mode 0755) and "
        f"dunscaith never changes the mode of a directory it did not create; if it is yours alone, chmod 700 {cache}"]
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o755
    assert not (cache / "settings.json").exists()
    os.chmod(cache, 0o700)  # the fix the line gives: remembered from the next command on, no warning
    again = cli.run("hold", "far")
    assert again.returncode == 2 and "warning" not in again.stderr, again.stderr
    assert (cache / "settings.json").exists()


def test_an_open_forwarded_instances_folder_on_the_owning_host_refuses_the_request_and_runs_nothing(cli: Cli) -> None:
    import secrets

    from dunscaith.domain.model.forwarding.request import ForwardRequest, Kind, encode_token
    from dunscaith.entrypoints.dunscaith.forwarding_root import version

    instances = cli.root / "forwarded"
    instances.mkdir(parents=True)
    os.chmod(instances, 0o755)
    request_id = secrets.token_hex(16)
    token = encode_token(ForwardRequest(request_id, Kind.RUN, ("submit", "--name", "far", "--", "true"),
                                        version(), "login2", 5.0, terminal=True))
    done = subprocess.run([DUNSCAITH, "_forwarded", token], env=cli.env(DUNSCAITH_FORWARDING__INSTANCES=str(instances)),
                          capture_output=True, timeout=90)
    assert done.returncode == 2, (done.stdout, done.stderr)
    frames = [line.split() for line in done.stdout.decode().splitlines() if line.startswith("DSF1 ")]
    said = "".join(base64.b64decode(f[3]).decode() for f in frames if f[2] == "err") + done.stderr.decode()
    assert "internal error" not in said and said.count("\n") == 1, said
    assert f"{instances} is open to others (mode 0755)" in said and f"chmod 700 {instances}" in said
    assert stat.S_IMODE(os.stat(instances).st_mode) == 0o755
    assert os.listdir(instances) == []  # the request made no instance: nothing ran
    assert not (cli.root / "records.db").exists()


def test_an_open_sent_requests_folder_refuses_the_forward_before_anything_is_sent(cli: Cli) -> None:
    cli.pointer_of_another_host("far", "running")
    sent = cli.tmp / "home" / ".config" / "dunscaith" / "forwarded"
    sent.mkdir(parents=True)
    os.chmod(sent, 0o755)
    done = cli.run("hold", "far")
    line = one_line(done)
    assert f"{sent} is open to others (mode 0755)" in line and f"chmod 700 {sent}" in line, line
    assert "could not connect" not in done.stderr  # refused before the hop: nothing was sent
    assert stat.S_IMODE(os.stat(sent).st_mode) == 0o755 and os.listdir(sent) == []


# Issue 38: `HOME=/nonexistent/home dunscaith list` made /nonexistent (0755) and the home in it.
@pytest.mark.parametrize("args", [["list"], ["list", "--json"], ["status"], ["submit", "--", "true"], ["doctor"],
                                  ["config", "show"], ["hold", "j1"]])
def test_a_missing_home_is_one_line_and_exit_2_and_never_made(cli: Cli, args: list[str]) -> None:
    gone = cli.tmp / "nonexistent"
    home = gone / "home"
    done = cli.run(*args, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"))
    assert one_line(done) == f"dunscaith: the home folder {home} does not exist: its folders are made only inside " \
                             "an existing home, never the home itself; set HOME to your home folder"
    assert len(done.stderr.splitlines()) == 1 and not gone.exists()
    assert not (cli.root / "records.db").exists()
    if "--json" in args:
        assert json.loads(done.stdout)["error"]["exit_code"] == 2


def test_help_is_answered_without_a_home(cli: Cli) -> None:
    gone = cli.tmp / "nonexistent"
    for args in (["--help"], ["list", "--help"], ["remote", "status", "--help"], ["--version"]):
        done = cli.run(*args, HOME=str(gone / "home"))
        assert done.returncode == 0 and done.stderr == "", (args, done.stderr)
    assert not gone.exists()
