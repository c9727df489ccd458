"""LocalTransport: the "remote" is this host, the command runs under the user's login shell.

For tests of the forwarding protocol without ssh, and a faithful one: sshd too runs the command line
with ``$SHELL -c``. A local session always "reached" the host; its exit status is the shell's.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Mapping

from dunscaith.adapters.transport.process_channel import ProcessChannel
from dunscaith.domain.model.forwarding.evidence import SessionEvidence


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


class LocalTransport:
    name = "local"

    def __init__(self, shell: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.shell = shell or pwd.getpwuid(os.geteuid()).pw_shell or "/bin/sh"
        self.env = dict(env) if env is not None else None

    def open(self, host: str, command: str, terminal: bool, prompt: bool) -> ProcessChannel:
        process = subprocess.Popen([self.shell, "-c", command], stdin=None if terminal else subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
                                   start_new_session=not terminal)

        def evidence(code: int | None, stderr: str) -> SessionEvidence:
            return SessionEvidence(True, True, None, code, _last_line(stderr))

        return ProcessChannel(process, evidence)
