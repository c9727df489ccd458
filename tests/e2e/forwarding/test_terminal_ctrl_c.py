"""Ctrl-C at a terminal on login2, for a command forwarded to login1: it drains there exactly as it would
locally, and what it printed while draining reaches the terminal (issue 22, item 6).

The user's terminal is a pty this test holds; they are logged in to login2 with ``ssh -tt`` (so login2's
dunscaith is at a terminal too, and hands it on to login1 with ssh -tt or paramiko's pty). The job's
supervisor on login1 is stopped (``busy_job``): it holds the job's lock and answers nothing, so ``hold`` waits.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess

import pytest

from tests.e2e.forwarding.conftest import requested
from tests.infra.ssh_hosts import SshHosts, wait_for

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


@pytest.mark.parametrize("transport", ["openssh", "paramiko"])
def test_ctrl_c_on_a_forwarded_hold_at_a_terminal_shows_what_the_host_printed_as_it_drained(
        hosts: SshHosts, busy_job: str, transport: str) -> None:
    job = busy_job
    terminal = Terminal(hosts, "login2", f"DUNSCAITH_FORWARDING__TRANSPORT={transport} {hosts.dunscaith} "
                                         f"hold {job}; echo exit=$?")
    try:
        wait_for(lambda: terminal.read() is not None and requested(hosts, job, "hold"), 60,
                 "the forwarded hold to reach login1's record")
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
