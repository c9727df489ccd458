"""``dunscaith watch JOB`` (and ``status JOB --watch``): a job supervised by ``submit`` in one process,
watched from another, as a user with two terminals would; the local scheduler, real processes."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli, await_condition, await_state
from tests.expect import present
from tests.infra.postgres import PostgresTestServer

pytestmark = pytest.mark.slow


def _waiting(cli: Cli, job: str) -> tuple[subprocess.Popen[str], Path]:
    """A job that runs until its file ``go`` exists, supervised by ``submit`` in a process of its own."""
    go = cli.tmp / f"go-{job}"
    proc = cli.start("submit", "--name", job, "--", "sh", "-c", f"while [ ! -e {go} ]; do sleep 0.1; done")
    await_state(cli, job, "running")
    return proc, go


class Lines:
    """A watcher's stdout read as it comes (a live view is read while the watcher runs): bytes from its
    pipe as they arrive, cut into lines."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.seen: list[str] = []
        self._fd = present(proc.stdout).fileno()
        self._partial = b""

    def until(self, text: str, timeout: float = 60.0) -> str:
        """The first line (from the start) that holds ``text``, waiting for it as the watcher prints."""
        deadline = time.monotonic() + timeout
        while True:
            for line in self.seen:
                if text in line:
                    return line
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._fd], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"the watcher never printed {text!r}; it printed: {self.seen}")
            chunk = os.read(self._fd, 65536)
            if not chunk:
                raise AssertionError(f"the watcher ended without printing {text!r}; it printed: {self.seen}")
            *whole, self._partial = (self._partial + chunk).split(b"\n")
            self.seen.extend(line.decode() + "\n" for line in whole)

    def rest(self, timeout: float = 60.0) -> tuple[str, str]:
        """What it printed after, and its stderr, once it ends."""
        out, err = self.proc.communicate(timeout=timeout)
        return self._partial.decode() + out, err


def _kinds(cli: Cli, job: str) -> list[str]:
    import sqlite3

    db = sqlite3.connect(f"file:{cli.root / 'records.db'}?mode=ro", uri=True)
    try:
        return [row[0] for row in db.execute(
            "SELECT e.kind FROM events e JOIN jobs j ON j.id = e.job_id WHERE j.name = ? ORDER BY e.seq", (job,))]
    finally:
        db.close()


def test_watch_from_a_second_terminal_shows_the_supervisors_lines_as_they_come_and_exits_as_it_does(
        cli: Cli) -> None:
    submit, go = _waiting(cli, "w1")
    try:
        watcher = cli.start("watch", "w1")
        lines = Lines(watcher)
        assert "w1: recorded job w1 for cluster local" in lines.until("recorded job w1")
        lines.until("released to run")
        lines.until("is running")
        lines.until("watching: a supervisor elsewhere holds this job (now running)")
        go.touch()
        assert "outcome: succeeded" in lines.until("outcome: succeeded")
        out, err = lines.rest()
        assert watcher.returncode == 0, err
        assert submit.wait(timeout=60) == 0
        # the watcher printed the supervisor's own lines (timestamped, the same words): a line the
        # supervisor printed for the outcome is one the watcher printed
        supervised = present(submit.stdout).read()
        outcome = next(line for line in supervised.splitlines() if "outcome: succeeded" in line)
        assert outcome.split(" ", 1)[1] in "".join(lines.seen) + out
    finally:
        go.touch()
        if submit.poll() is None:
            submit.kill()


def test_status_watch_is_watch_and_a_failed_job_ends_it_with_1(cli: Cli) -> None:
    submit, go = _waiting(cli, "w2")
    try:
        watcher = cli.start("status", "w2", "--watch")
        lines = Lines(watcher)
        lines.until("watching: a supervisor elsewhere holds this job (now running)")
        cancel = cli.run("cancel", "w2")  # from a third terminal: the supervisor ends the job cancelled
        assert cancel.returncode == 0, cancel.stderr
        lines.until("outcome: cancelled")
        _, err = lines.rest()
        assert watcher.returncode == 1, err
        assert submit.wait(timeout=60) == 1
    finally:
        go.touch()
        if submit.poll() is None:
            submit.kill()


def test_a_settled_job_is_shown_and_the_watch_ends_at_once_with_its_supervisors_code(cli: Cli) -> None:
    assert cli.run("submit", "--name", "ok", "--", "true").returncode == 0
    assert cli.run("submit", "--name", "bad", "--", "false").returncode == 1
    ok = cli.run("watch", "ok", timeout=30)
    assert ok.returncode == 0 and "outcome: succeeded" in ok.stdout and "done: nothing left to do" in ok.stdout
    bad = cli.run("watch", "bad", timeout=30)
    assert bad.returncode == 1 and "outcome: failed" in bad.stdout


def test_an_unattended_job_is_said_once_and_the_watch_ends_with_5_and_how_to_reattach(cli: Cli) -> None:
    # Issue 38: the watch of a job nobody supervises followed its record for ever, though nothing writes it
    # (the job may have ended long before): it ends, says so once, and how to reattach.
    submit, go = _waiting(cli, "w3")
    try:
        submit.send_signal(signal.SIGTERM)  # its supervisor drains: the job runs on, Unattended
        submit.communicate(timeout=60)
        watched = cli.run("watch", "w3", timeout=60)
        assert watched.returncode == 5, watched.stderr
        assert sum("no supervisor holds this job (Unattended, running)" in line
                   for line in watched.stdout.splitlines()) == 1
        assert watched.stderr == ("dunscaith: job w3 is Unattended (running, no supervisor): only a supervisor "
                                  "writes its record, so the watch ends here; reattach with: dunscaith supervise "
                                  "w3 (what its scheduler says now: dunscaith status w3)\n")
        go.touch()
        assert cli.run("supervise", "w3").returncode == 0
        assert cli.run("watch", "w3").returncode == 0  # settled now: shown, and the outcome's code
    finally:
        go.touch()
        if submit.poll() is None:
            submit.kill()


def test_a_supervisor_that_reattaches_is_followed_by_a_watch_begun_while_it_runs(cli: Cli) -> None:
    submit, go = _waiting(cli, "w4")
    supervise = None
    try:
        submit.send_signal(signal.SIGTERM)
        submit.communicate(timeout=60)
        supervise = cli.start("supervise", "w4")
        await_condition(lambda: cli.status("w4")["supervisor"]["held"], what="the supervisor to hold w4")
        watcher = cli.start("watch", "w4")
        lines = Lines(watcher)
        lines.until("a supervisor elsewhere holds this job")
        go.touch()
        lines.until("outcome: succeeded")
        _, err = lines.rest()
        assert watcher.returncode == 0, err
        assert supervise.wait(timeout=60) == 0
    finally:
        go.touch()
        for proc in (submit, supervise):
            if proc is not None and proc.poll() is None:
                proc.kill()


def test_ctrl_c_ends_the_watch_quietly_with_130_and_the_supervisor_and_its_record_never_see_it(
        cli: Cli) -> None:
    submit, go = _waiting(cli, "w4")
    try:
        before = _kinds(cli, "w4")
        watcher = cli.start("watch", "w4")
        lines = Lines(watcher)
        lines.until("watching: a supervisor elsewhere holds this job (now running)")
        # while it watches, the job's lock is free for its supervisor alone: a second supervisor is still
        # refused as locked by the first (never by the watcher), and status says the first holds it
        again = cli.run("supervise", "w4")
        assert again.returncode == 2 and "locked" in again.stderr
        os.kill(watcher.pid, signal.SIGINT)
        out, err = lines.rest(30)
        assert watcher.returncode == 130
        assert err == "" and "Traceback" not in out
        assert _kinds(cli, "w4") == before  # not one event from the watcher
        status = cli.status("w4")
        assert status["state"] == "running" and status["supervisor"]["held"] and not status["unattended"]
        go.touch()
        assert submit.wait(timeout=60) == 0
    finally:
        go.touch()
        if submit.poll() is None:
            submit.kill()


def test_watch_of_no_such_job_is_one_line_and_exit_2(cli: Cli) -> None:
    done = cli.run("watch", "nosuch")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "nosuch" in done.stderr
    both = cli.run("status", "nosuch", "--watch", "--json")
    assert both.returncode == 2 and len(both.stderr.strip().splitlines()) == 1


@pytest.mark.postgres
def test_watch_on_a_postgresql_store_from_another_login_node_follows_the_supervisors_appends(
        cli: Cli, postgres_server: PostgresTestServer, postgres_db: str) -> None:
    """The store shared by login nodes: watched from another record root (another node), the supervisor's
    own appends reach the watcher by the server's notice (with a live notice the watcher reads the record
    only when told: no notice, no line)."""
    pg = {"DUNSCAITH_RECORDS__BACKEND": "postgresql", "DUNSCAITH_RECORDS__URL": postgres_server.url(postgres_db)}
    go = cli.tmp / "go-pg"
    submit = cli.start("submit", "--name", "wpg", "--", "sh", "-c", f"while [ ! -e {go} ]; do sleep 0.1; done",
                       env=pg)
    try:
        Lines(submit).until("is running")  # its supervisor's own live view
        watcher = cli.start("watch", "wpg", env={**pg, "DUNSCAITH_RECORDS__ROOT": str(cli.tmp / "login2-records")})
        lines = Lines(watcher)
        lines.until("recorded job wpg")
        lines.until("is running")
        lines.until("watching: a supervisor elsewhere holds this job")
        go.touch()
        lines.until("outcome: succeeded")
        out, err = lines.rest()
        assert watcher.returncode == 0, err
        assert "done: nothing left to do" in "".join(lines.seen) + out
        assert submit.wait(timeout=60) == 0
    finally:
        go.touch()
        if submit.poll() is None:
            submit.kill()
