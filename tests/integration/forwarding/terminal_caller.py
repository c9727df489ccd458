"""A caller at a terminal (its stdin is a pty the test holds): forwards argv with terminal=True.

``python -m tests.integration.forwarding.terminal_caller CONFIG USER KEY BINARY RESULT_FILE ARGV...``;
the command's output goes to stdout, the verdict as JSON to RESULT_FILE.
"""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path

from adapters.clock.system import SystemClock
from adapters.transport.caller_streams import StdioStreams
from adapters.transport.openssh import OpenSshTransport
from adapters.transport.sent_requests import FileSentRequests
from domain.services.forwarding.forward import ForwardCommand


def main() -> None:
    config, user, key, binary, result, *argv = sys.argv[1:]
    transport = OpenSshTransport(config_file=config, options=(f"User={user}", f"IdentityFile={key}"))
    command = ForwardCommand(transport, FileSentRequests(Path(result).parent / "sent"), StdioStreams(), SystemClock(),
                             lambda: secrets.token_hex(16), "0+test", "caller", heartbeat_seconds=0.5)
    done = command("login1", binary, argv, terminal=True)
    Path(result).write_text(json.dumps({"kind": done.verdict.kind.value, "code": done.verdict.exit_code}))


if __name__ == "__main__":
    main()
