"""A caller at a terminal (its stdin is a pty the test holds): forwards argv with terminal=True.

``python -m tests.integration.forwarding.terminal_caller TRANSPORT CONFIG USER KEY BINARY RESULT_FILE ARGV...``
(TRANSPORT: openssh or paramiko); the command's output goes to stdout, the verdict as JSON to RESULT_FILE,
and whether the terminal got its modes back afterwards.
"""

from __future__ import annotations

import json
import secrets
import sys
import termios
from pathlib import Path

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.transport.caller_streams import StdioStreams
from dunscaith.adapters.transport.openssh import OpenSshTransport
from dunscaith.adapters.transport.paramiko_ssh import ParamikoTransport
from dunscaith.adapters.transport.sent_requests import FileSentRequests
from dunscaith.domain.services.forwarding.forward import ForwardCommand


def main() -> None:
    kind, config, user, key, binary, result, *argv = sys.argv[1:]
    transport: OpenSshTransport | ParamikoTransport = (
        OpenSshTransport(config_file=config, options=(f"User={user}", f"IdentityFile={key}")) if kind == "openssh"
        else ParamikoTransport(config_file=config, user=user, key_file=key))
    modes = termios.tcgetattr(0)
    command = ForwardCommand(transport, FileSentRequests(Path(result).parent / "sent"),
                             StdioStreams(raw_terminal=True), SystemClock(), lambda: secrets.token_hex(16), "0+test",
                             "caller", heartbeat_seconds=0.5)
    done = command("login1", binary, argv, terminal=True)
    Path(result).write_text(json.dumps({"kind": done.verdict.kind.value, "code": done.verdict.exit_code,
                                        "modes_back": termios.tcgetattr(0) == modes}))


if __name__ == "__main__":
    main()
