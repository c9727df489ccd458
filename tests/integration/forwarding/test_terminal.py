"""At a terminal, the remote gets one and this terminal is handed to it (ssh -tt, or paramiko's get_pty and
a raw terminal copied in): Ctrl-C reaches the remote as SIGINT, and the terminal gets its modes back."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.infra.forwarding_support import hosts_or_skip
from tests.infra.ssh_hosts import ROOT, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd]


@pytest.mark.parametrize("transport", ["openssh", "paramiko"])
def test_ctrl_c_at_the_caller_s_terminal_reaches_the_forwarded_command_as_sigint(tmp_path: Path,
                                                                                  transport: str) -> None:
    hosts = hosts_or_skip()
    name = f"tty-{transport}-{tmp_path.name[-6:]}"
    go = hosts.user.home / f"go-{name}"
    master, slave = pty.openpty()
    result = tmp_path / "result.json"
    argv = ["submit", "--name", name, "--", "/bin/sh", "-c", f"while [ ! -e {go} ]; do sleep 0.1; done"]
    caller = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.forwarding.terminal_caller", transport, str(hosts.client_config),
         hosts.user.name, str(hosts.user.key), hosts.dunscaith, str(result), *argv],
        stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, start_new_session=True)
    os.close(slave)
    out = bytearray()
    try:
        os.set_blocking(caller.stdout.fileno(), False)  # type: ignore[union-attr]

        def released() -> bool:
            try:
                out.extend(caller.stdout.read() or b"")  # type: ignore[union-attr]
            except BlockingIOError:
                pass
            return b"released" in out

        wait_for(released, 60, "the forwarded submit to release its job")
        os.write(master, b"\x03")  # Ctrl-C, typed at the caller's terminal
        assert caller.wait(60) == 0, caller.stderr.read()  # type: ignore[union-attr]
        verdict = json.loads(result.read_text())
        # The remote supervisor drained on SIGINT and died by it: its own 130 came back in the frames.
        assert verdict == {"kind": "completed", "code": 130, "modes_back": True}
    finally:
        go.touch()
        os.close(master)
        if caller.poll() is None:
            caller.kill()


@pytest.mark.parametrize("transport", ["openssh", "paramiko"])
def test_the_remote_terminal_has_the_caller_s_size(tmp_path: Path, transport: str) -> None:
    import fcntl
    import struct
    import termios

    hosts = hosts_or_skip()
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
    result = tmp_path / "result.json"
    argv = ["remote", "run", "--", "/bin/sh", "-c", "stty size"]
    caller = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.forwarding.terminal_caller", transport, str(hosts.client_config),
         hosts.user.name, str(hosts.user.key), hosts.dunscaith, str(result), *argv],
        stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, start_new_session=True)
    os.close(slave)
    try:
        out, err = caller.communicate(timeout=60)
        assert caller.returncode == 0, err
        assert json.loads(result.read_text()) == {"kind": "completed", "code": 0, "modes_back": True}
        assert out.split() == [b"33", b"101"]
    finally:
        os.close(master)
        if caller.poll() is None:
            caller.kill()



@pytest.mark.parametrize("transport", ["openssh", "paramiko"])
def test_the_remote_terminal_neither_echoes_nor_flushes_into_the_frames(tmp_path: Path, transport: str) -> None:
    """The remote terminal carries the frames: a typed ^C (or any key) is not echoed into them, its SIGINT
    does not flush frames written and not read yet, and a frame leaves in one write (no output processing);
    what the command reads from it is as before (canonical input, signals)."""
    hosts = hosts_or_skip()
    master, slave = pty.openpty()
    result = tmp_path / "result.json"
    argv = ["remote", "run", "--", "/bin/sh", "-c", "stty -a"]
    caller = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.forwarding.terminal_caller", transport, str(hosts.client_config),
         hosts.user.name, str(hosts.user.key), hosts.dunscaith, str(result), *argv],
        stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, start_new_session=True)
    os.close(slave)
    try:
        out, err = caller.communicate(timeout=60)
        assert caller.returncode == 0, err
        assert json.loads(result.read_text())["kind"] == "completed"
        modes = out.decode().split()
        assert {"-echo", "noflsh", "-opost", "isig", "icanon"} <= set(modes), modes
    finally:
        os.close(master)
        if caller.poll() is None:
            caller.kill()
