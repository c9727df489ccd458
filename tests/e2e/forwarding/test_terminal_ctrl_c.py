"""Ctrl-C at a terminal on login2, for a command forwarded to login1: it drains there exactly as it would
locally, and what it printed while draining reaches the terminal (issue 22, item 6).

The user's terminal is a pty this test holds; they are logged in to login2 with ``ssh -tt`` (so login2's
dunscaith is at a terminal too, and hands it on to login1 with ssh -tt or paramiko's pty). The job's
supervisor on login1 is stopped (SIGSTOP): it holds the job's lock and answers nothing, so ``hold`` waits.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra.forwarding_support import hosts_or_skip
from tests.infra.ssh_hosts import NOISE, SshHosts, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd]


class Terminal:
    """A pty whose far end is a login to ``host`` (``ssh -tt``): what a person types and sees."""

    def __init__(self, hosts: SshHosts, host: str, command: str) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen([*hosts.ssh_argv(host), "-tt", command], stdin=slave, stdout=slave,
                                        stderr=slave, start_new_session=True)
        os.close(slave)
        self.seen = bytearray()

    def read(self) -> bytes:
        while select.select([self.master], [], [], 0)[0]:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the login ended: the pty has no other end
                break
            if not chunk:
                break
            self.seen += chunk
        return bytes(self.seen)

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        os.close(self.master)


@pytest.fixture(scope="module")
def hosts() -> SshHosts:
    return hosts_or_skip()


@pytest.fixture
def busy_job(hosts: SshHosts, tmp_path: Path) -> Iterator[str]:
    """A job running on login1 whose supervisor is stopped: it holds the lock and answers no request."""
    job = f"b-{tmp_path.name[-6:]}"
    go = hosts.user.home / f"go-{job}"
    submit = hosts.popen("login1", f"{hosts.dunscaith} submit --name {job} -- /bin/sh -c "
                                   f"'while [ ! -e {go} ]; do sleep 0.1; done'",
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    supervisor: list[str] = []
    try:
        os.set_blocking(submit.stdout.fileno(), False)  # type: ignore[union-attr]
        seen = bytearray()

        def running() -> bool:
            seen.extend(submit.stdout.read() or b"")  # type: ignore[union-attr]
            return b"is running" in seen

        wait_for(running, 60, "the job to run on login1")
        supervisor = hosts.inside("login1", "pgrep", "-f", f"dunscaith submit --name {job}").stdout.split()
        assert len(supervisor) == 1
        hosts.inside("login1", "kill", "-STOP", supervisor[0])
        yield job
    finally:
        for pid in supervisor:
            hosts.inside("login1", "kill", "-CONT", pid, check=False)
        go.touch()
        try:
            submit.wait(60)
        finally:
            if submit.poll() is None:
                submit.kill()


@pytest.mark.parametrize("transport", ["openssh", "paramiko"])
def test_ctrl_c_on_a_forwarded_hold_at_a_terminal_shows_what_the_host_printed_as_it_drained(
        hosts: SshHosts, busy_job: str, transport: str) -> None:
    job = busy_job
    terminal = Terminal(hosts, "login2", f"DUNSCAITH_FORWARDING__TRANSPORT={transport} {hosts.dunscaith} "
                                         f"hold {job}; echo exit=$?")
    try:
        def asked() -> bool:
            terminal.read()
            done = hosts.ssh("login1", f"{hosts.dunscaith} status {job} --json")
            lines = [line for line in done.stdout.splitlines() if line.strip() != NOISE]
            return done.returncode == 0 and any(r["action"] == "hold" for r in json.loads("".join(lines))["requests"])

        wait_for(asked, 60, "the forwarded hold to reach login1's record")
        terminal.type(b"\x03")
        wait_for(lambda: b"exit=" in terminal.read() and b"\n" in terminal.read().split(b"exit=")[1], 60,
                 "the forwarded hold to end")
        shown = terminal.read().decode("utf-8", "replace").replace("\r", "")
        # What the host's hold printed as it drained, on the user's terminal, and the exit it had there.
        assert f"dunscaith: job {job}: hold: not answered within" in shown, shown
        assert "the request stays in the record" in shown
        assert "exit=130" in shown
        assert "MAY HAVE RUN" not in shown
    finally:
        terminal.close()
