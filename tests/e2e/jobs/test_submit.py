"""``dunscaith submit / status / list`` as a user runs them: a real process, SQLite, the local scheduler."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.e2e.jobs.cli import DUNSCAITH, Cli

pytestmark = pytest.mark.slow


def test_submit_a_command_that_succeeds_exits_0_and_status_says_succeeded(cli: Cli) -> None:
    done = cli.run("submit", "--name", "hello", "--", "sh", "-c", "echo hi")
    assert done.returncode == 0, done.stderr
    assert "outcome: succeeded" in done.stdout
    status = cli.status("hello")
    assert status["state"] == "succeeded" and status["settled"] and not status["unattended"]
    assert [a["object_state"] for a in status["attempts"]] == ["completed"]


def test_submit_a_command_that_fails_exits_1(cli: Cli) -> None:
    done = cli.run("submit", "--name", "sad", "--", "sh", "-c", "exit 3")
    assert done.returncode == 1, done.stderr
    assert "exit code 3" in done.stdout


def test_submit_a_script_runs_its_text(cli: Cli) -> None:
    script = cli.tmp / "job.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    done = cli.run("submit", "--name", "scripted", str(script))
    assert done.returncode == 0, done.stderr


def test_list_shows_every_job_and_json_parses(cli: Cli) -> None:
    cli.run("submit", "--name", "one", "--", "true")
    cli.run("submit", "--name", "two", "--", "false")
    plain = cli.run("list")
    assert plain.returncode == 0
    header, *rows = plain.stdout.splitlines()  # a table (docs/job-commands.md "list: the table")
    assert header.split()[:2] == ["NAME", "STATE"]
    assert [line.split()[:2] for line in rows] == [["two", "failed"], ["one", "succeeded"]]
    bare = cli.run("list", "--noheader", "--format", "name")
    assert bare.stdout.splitlines() == ["two", "one"]
    listed = json.loads(cli.run("list", "--json").stdout)
    assert [j["job"] for j in listed["jobs"]] == ["two", "one"]  # newest first
    assert (listed["pointers"], listed["residual"], listed["damaged"]) == ([], [], [])
    assert [(j["state"], j["settled"], len(j["attempts"])) for j in listed["jobs"]] == [("failed", True, 1),
                                                                                      ("succeeded", True, 1)]


def test_list_shows_a_page_newest_first_and_says_how_many_more(cli: Cli) -> None:
    for name in ("a", "b", "c"):
        cli.run("submit", "--name", name, "--", "true")
    page = cli.run("list", "--limit", "2")
    assert page.returncode == 0, page.stderr
    assert [line.split()[0] for line in page.stdout.splitlines()] == ["NAME", "c", "b"]
    assert "1 older job not shown (newest first): --limit N, or --limit 0 for all" in page.stderr
    every = cli.run("list", "--limit", "0")
    assert [line.split()[0] for line in every.stdout.splitlines()] == ["NAME", "c", "b", "a"]
    assert "not shown" not in every.stderr
    assert [j["job"] for j in json.loads(cli.run("list", "--json", "--limit", "1").stdout)["jobs"]] == ["c"]


def test_the_pointer_is_written_private_with_the_last_state(cli: Cli) -> None:
    cli.run("submit", "--name", "pointed", "--", "true")
    pointer = cli.tmp / "home" / ".config" / "dunscaith" / "jobs" / "pointed"
    assert oct(pointer.stat().st_mode & 0o777) == "0o600"
    assert json.loads(pointer.read_text())["state"] == "succeeded"


@pytest.mark.parametrize(("args", "says"), [
    (["submit"], "nothing to run"),
    (["submit", "--cluster", "mars", "--", "true"], "no cluster named 'mars'"),
    (["submit", "--name", "a/b", "--", "true"], "job name"),
    (["submit", "/no/such/script"], "script /no/such/script"),
    (["status", "ghost"], "ghost"),
    (["supervise", "ghost"], "ghost"),
])
def test_bad_input_is_one_line_and_exit_2(cli: Cli, args: list[str], says: str) -> None:
    done = cli.run(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_name_already_recorded_is_refused_and_the_first_record_kept(cli: Cli) -> None:
    assert cli.run("submit", "--name", "twice", "--", "true").returncode == 0
    again = cli.run("submit", "--name", "twice", "--", "false")
    assert again.returncode == 2 and "already recorded" in again.stderr
    assert cli.status("twice")["state"] == "succeeded"


def test_a_bad_configuration_file_is_one_line_and_exit_2(cli: Cli) -> None:
    config = cli.tmp / "home" / ".config" / "dunscaith"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[supervise]\npoll = -1\n")
    env_free = cli.env()
    env_free.pop("DUNSCAITH_SUPERVISE__POLL")  # the file's value, not the environment's
    done = subprocess.run([DUNSCAITH, "list"], env=env_free, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "supervise.poll" in done.stderr, done.stderr


# ------------------------------------------------------------------ the record root is refused

def _refused(cli: Cli, done: object, word: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)  # type: ignore[attr-defined]
    err = done.stderr.strip()  # type: ignore[attr-defined]
    assert word in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_record_root_that_is_a_symlink_is_refused(cli: Cli) -> None:
    real = cli.tmp / "real"
    real.mkdir(mode=0o700)
    os.symlink(real, cli.root)
    _refused(cli, cli.run("submit", "--", "true"), "symbolic link")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a directory owned by another user needs root")
def test_a_record_root_owned_by_someone_else_is_refused(cli: Cli) -> None:
    cli.root.mkdir(mode=0o700)
    os.chown(cli.root, 4242, 4242)
    _refused(cli, cli.run("submit", "--", "true"), str(cli.root))


def test_a_record_root_bound_to_another_host_is_refused(cli: Cli) -> None:
    assert cli.run("status", "none").returncode == 2  # makes the store: binds the root to this host (list makes none)
    host = cli.root / "HOST"
    host.chmod(0o600)
    host.write_text('{"hostname":"elsewhere","machine_id":"0123456789abcdef0123456789abcdef"}\n')
    _refused(cli, cli.run("submit", "--", "true"), "elsewhere")


def test_a_record_root_on_nfs_is_refused_naming_the_setting(cli: Cli) -> None:
    mountinfo = cli.tmp / "mountinfo"
    mountinfo.write_text(f"36 1 0:40 / {cli.tmp} rw,relatime shared:1 - nfs4 server:/export rw\n")
    done = cli.run("submit", "--", "true", DUNSCAITH_TEST_MOUNTINFO=str(mountinfo))
    _refused(cli, done, "nfs4")
    assert "records.root" in done.stderr


def test_a_job_of_another_host_is_listed_from_its_pointer_and_judged_unattended(cli: Cli) -> None:
    from datetime import UTC, datetime, timedelta

    from dunscaith.adapters.pointers.files import FilePointers
    from dunscaith.domain.model.jobs.ids import JobId
    from dunscaith.domain.model.jobs.pointer import Pointer
    from dunscaith.domain.model.jobs.record import HostIdentity

    pointers = FilePointers(cli.tmp / "home" / ".config" / "dunscaith" / "jobs")
    old = datetime.now(UTC) - timedelta(hours=1)
    pointers.write(Pointer(JobId("far"), "login2", "/var/tmp/dunscaith-x", HostIdentity("f" * 32, "login2"),
                           "/opt/dunscaith/bin/dunscaith", "local", "local", "running", old, old))
    listed = cli.run("list")
    assert "far  running  on host login2 (from its pointer; looks Unattended)" in listed.stdout
    assert "reattach with: dunscaith supervise far (it runs on login2)" in listed.stderr
    status = cli.run("status", "far")  # forwarded to login2, which cannot be reached here
    assert status.returncode == 2 and "nothing ran on login2" in status.stderr


def test_a_record_that_does_not_read_is_one_line_and_exit_2_for_status_and_supervise(cli: Cli) -> None:
    from datetime import UTC, datetime

    from dunscaith.adapters.host.system import SystemHost
    from dunscaith.adapters.store.sqlite.store import SqliteStore
    from dunscaith.domain.model.jobs.ids import JobId

    assert cli.run("submit", "--name", "damaged", "--", "true").returncode == 0
    with SqliteStore.open(cli.root, SystemHost()) as store:  # as a newer build would have written it
        store.append(JobId("damaged"), datetime.now(UTC), "launched-by-a-newer-build", {})
    for args in (["status", "damaged"], ["supervise", "damaged"]):
        done = cli.run(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "does not read" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    listed = cli.run("list")
    assert "damaged  damaged:" in listed.stdout
