"""OpenSshTransport: the system ``ssh`` client, so the user's whole ssh configuration applies.

Include, Match, ProxyJump, ControlMaster, GSSAPI/Kerberos, hostbased authentication and
certificate-authority known_hosts are what HPC sites rely on, and only the real client honours them
all. dunscaith adds only: BatchMode (no prompt unless asked, after an authentication failure, at a
terminal), a connect timeout, ServerAlive (a cut link is noticed), ``-T``/``-tt``, and its own log
(``-E``, DEBUG1) from which a failure is classified. It never passes an option that lowers host key
checking.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from dunscaith.adapters.transport.process_channel import ProcessChannel
from dunscaith.domain.model.forwarding.evidence import SessionEvidence
from dunscaith.ports.transport import TransportRefused

# user@host or host: what ssh reads as a destination, never as an option.
_DESTINATION = re.compile(r"(?:[A-Za-z0-9._][A-Za-z0-9._-]*@)?[A-Za-z0-9_][A-Za-z0-9._:-]*")


class OpenSshTransport:
    name = "openssh"

    def __init__(self, ssh: str = "ssh", config_file: str | None = None, connect_timeout: int = 20,
                 server_alive_interval: int = 15, server_alive_count: int = 4,
                 options: Sequence[str] = ()) -> None:
        self.ssh = ssh
        self.config_file = config_file
        self.connect_timeout = connect_timeout
        self.server_alive_interval = server_alive_interval
        self.server_alive_count = server_alive_count
        self.options = tuple(options)

    @staticmethod
    def available(ssh: str = "ssh") -> bool:
        return shutil.which(ssh) is not None

    def argv(self, host: str, command: str, terminal: bool, prompt: bool, log: Path) -> list[str]:
        if not _DESTINATION.fullmatch(host):
            raise TransportRefused(f"host {host!r} is not a name ssh can be given safely")
        argv = [self.ssh]
        if self.config_file is not None:
            argv += ["-F", self.config_file]
        argv += ["-tt" if terminal else "-T",
                 "-o", f"BatchMode={'no' if prompt else 'yes'}",
                 "-o", f"ConnectTimeout={self.connect_timeout}",
                 "-o", f"ServerAliveInterval={self.server_alive_interval}",
                 "-o", f"ServerAliveCountMax={self.server_alive_count}",
                 "-o", "LogLevel=DEBUG1", "-E", str(log)]
        for option in self.options:
            argv += ["-o", option]
        return [*argv, host, command]

    def open(self, host: str, command: str, terminal: bool, prompt: bool) -> ProcessChannel:
        if shutil.which(self.ssh) is None:
            raise TransportRefused(f"no ssh client ({self.ssh}) on this host; set forwarding.transport = "
                                   "\"paramiko\" to use the built-in one")
        folder = Path(tempfile.mkdtemp(prefix="dunscaith-ssh-"))  # 0700, ours
        log = folder / "ssh.log"
        argv = self.argv(host, command, terminal, prompt, log)
        try:
            process = subprocess.Popen(argv, stdin=None if terminal else subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, start_new_session=not terminal)
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise TransportRefused(f"{self.ssh} could not be started: {exc.strerror or exc}") from None

        def evidence(code: int | None, stderr: str) -> SessionEvidence:
            from dunscaith.domain.model.forwarding.openssh_log import (
                openssh_evidence,  # at the end: not before ssh starts
            )

            try:
                text = log.read_text("utf-8", "replace")
            except OSError:
                text = ""
            return openssh_evidence(text, stderr)

        return ProcessChannel(process, evidence, cleanup=lambda: shutil.rmtree(folder, ignore_errors=True))



