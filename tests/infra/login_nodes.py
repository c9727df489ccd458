"""What the tests typing on the sshd login nodes share (tests/infra/ssh_hosts.py): a process on a host
watched line by line, a command run inside a host without ssh, output without the startup-file noise,
and an ssh configuration under which no ssh can connect (and every attempt leaves a mark).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.infra.ssh_hosts import NOISE, SshHosts, wait_for


@dataclass
class Watched:
    """A process whose output lines are collected as they come, each with the time it was read."""

    process: subprocess.Popen[bytes]
    lines: list[tuple[float, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self.lines.append((time.monotonic(), raw.decode(errors="replace").rstrip("\n")))

    def seen(self, text: str) -> float | None:
        return next((at for at, line in list(self.lines) if text in line), None)

    def wait_for(self, text: str, timeout: float = 120) -> float:
        def found() -> bool:
            if self.seen(text) is None and self.process.poll() is not None:
                time.sleep(0.2)  # the reader may still hold the last lines
                if self.seen(text) is None:
                    raise AssertionError(f"ended ({self.process.returncode}) without {text!r}: {self.text()}")
            return self.seen(text) is not None

        wait_for(found, timeout, repr(text))
        at = self.seen(text)
        assert at is not None
        return at

    def ended(self, timeout: float = 120) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running after {timeout} s: {self.text()}") from None

    def text(self) -> str:
        return "\n".join(line for _, line in self.lines if line.strip() != NOISE)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def inside(hosts: SshHosts, host: str, command: str) -> Watched:
    """``command`` run as the test user inside ``host``'s namespaces, without ssh (its link may be cut)."""
    user = hosts.user
    argv = ["nsenter", "-t", str(hosts.host(host).init_pid), "-a", "runuser", "-u", user.name, "--",
            "env", "-i", f"HOME={user.home}", f"USER={user.name}", f"LOGNAME={user.name}",
            "PATH=/usr/local/bin:/usr/bin:/bin", "/bin/sh", "-c", f"cd && exec {command}"]
    return Watched(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))


def out(done: subprocess.CompletedProcess[str]) -> str:
    """What the command printed, without the test user's own startup-file line (the outer ssh's, not ours)."""
    return "".join(line for line in done.stdout.splitlines(keepends=True) if line.strip() != NOISE)


@dataclass(frozen=True)
class NoSsh:
    """An ssh config (``forwarding.ssh_config``) under which every connection fails before it is made:
    its ProxyCommand appends the host it was asked for to ``attempts`` and exits 1."""

    config: Path
    attempts: Path

    def tried(self) -> list[str]:
        return self.attempts.read_text().split() if self.attempts.exists() else []

    def remove(self) -> None:
        self.config.unlink(missing_ok=True)
        self.attempts.unlink(missing_ok=True)


def no_ssh_config(hosts: SshHosts, name: str = "no-ssh-config") -> NoSsh:
    home = hosts.user.home
    no_ssh = NoSsh(home / name, home / f"{name}.attempts")
    no_ssh.config.write_text(f"Host *\n    ProxyCommand /bin/sh -c 'echo %h >> {no_ssh.attempts}; exit 1'\n"
                             "    BatchMode yes\n")
    shutil.chown(no_ssh.config, hosts.user.name, hosts.user.name)
    return no_ssh


def job_name(prefix: str) -> str:
    """A job name no other test of the session uses (the hosts share one home and its pointers)."""
    return f"{prefix}-{secrets.token_hex(3)}"


def submit_on(hosts: SshHosts, host: str, job: str, *args: str) -> Watched:
    """``dunscaith submit --cluster hpc --name JOB ARGS`` typed on ``host``, watched as it runs."""
    return inside(hosts, host, f"{hosts.dunscaith} submit --cluster hpc --name {job} {' '.join(args)}")
