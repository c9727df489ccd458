"""``dunscaith watch JOB`` typed on login2 for a job supervised by ``submit`` on login1 (real sshd hosts):
forwarded as ``status`` is, its lines streamed back as the record grows there, ending with the
supervisor's code; nothing is added to the job's record by the watch."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.expect import present
from tests.infra.forwarding_support import hosts_or_skip
from tests.infra.ssh_hosts import NOISE, SshHosts, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd]


@pytest.fixture(scope="module")
def hosts() -> SshHosts:
    return hosts_or_skip()


class Streamed:
    """What a process prints on stdout, read as it comes (bytes from the pipe, cut into lines)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._fd = present(proc.stdout).fileno()
        self._partial = b""

    def until(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            ready, _, _ = select.select([self._fd], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(self._fd, 65536) if ready else b""
            if not chunk:
                raise AssertionError(f"never printed {text!r}; printed: {self.lines}")
            *whole, self._partial = (self._partial + chunk).split(b"\n")
            self.lines.extend(line.decode(errors="replace") for line in whole if line.decode() != NOISE)


def _kinds(hosts: SshHosts, job: str) -> list[str]:
    done = hosts.ssh("login1", f"{hosts.dunscaith} status {job} --json")
    text = "".join(line for line in done.stdout.splitlines() if line.strip() != NOISE)
    record = json.loads(text)
    return [a["order"] for a in record["attempts"]] + [r["action"] for r in record["requests"]]


def test_watch_from_login2_streams_the_lines_of_login1s_supervisor_and_exits_with_its_code(
        hosts: SshHosts, tmp_path: Path) -> None:
    ds = hosts.dunscaith
    job = f"w-{tmp_path.name[-6:]}"
    go = hosts.user.home / f"go-{job}"
    submit = hosts.popen("login1", f"{ds} submit --name {job} -- /bin/sh -c 'while [ ! -e {go} ]; do sleep 0.1; done'",
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    watcher = None
    try:
        Streamed(submit).until("is running")
        before = _kinds(hosts, job)
        watcher = hosts.popen("login2", f"{ds} watch {job}", stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        seen = Streamed(watcher)
        # streamed as it comes: the live view's lines reach login2 while the job still runs on login1
        seen.until(f"{job}: recorded job {job} for cluster local")
        seen.until("watching: a supervisor elsewhere holds this job (now running)")
        assert watcher.poll() is None and submit.poll() is None
        assert _kinds(hosts, job) == before  # the watcher wrote nothing, not even a request
        go.touch()
        seen.until("outcome: succeeded")
        wait_for(lambda: watcher is not None and watcher.poll() is not None, 60, "the watch to end")
        assert watcher.returncode == 0, present(watcher.stderr).read()
        assert submit.wait(60) == 0
        # nothing of the job on login2: the watch ran on login1
        assert hosts.ssh("login2", f"ls /var/tmp/dunscaith-{hosts.user.name}/records.db").returncode != 0
    finally:
        go.touch()
        for proc in (submit, watcher):
            if proc is not None and proc.poll() is None:
                proc.kill()


def test_ctrl_c_on_a_forwarded_watch_at_a_terminal_ends_it_with_130_and_the_job_goes_on(
        hosts: SshHosts, busy_job: str) -> None:
    """The user's terminal on login2 (``ssh -tt``) watches a job of login1 whose supervisor answers nothing
    (stopped): the watch needs nothing of it, and Ctrl-C reaches login1 as SIGINT and ends only the watch."""
    from tests.e2e.forwarding.test_terminal_ctrl_c import Terminal

    job = busy_job
    before = _kinds(hosts, job)
    terminal = Terminal(hosts, "login2", f"{hosts.dunscaith} watch {job}; echo exit=$?")
    try:
        wait_for(lambda: b"watching: a supervisor elsewhere holds this job" in terminal.read(), 60,
                 "the forwarded watch to show the job")
        terminal.type(b"\x03")
        wait_for(lambda: b"exit=" in terminal.read() and b"\n" in terminal.read().split(b"exit=")[1], 60,
                 "the forwarded watch to end")
        shown = terminal.read().decode("utf-8", "replace").replace("\r", "")
        assert "exit=130" in shown, shown
        assert "MAY HAVE RUN" not in shown and "Traceback" not in shown
        assert _kinds(hosts, job) == before  # nothing asked of the job, nothing written
    finally:
        terminal.close()
