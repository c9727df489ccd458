"""Transport: run one command line on another host and stream its output (seed 000, forwarding).

A transport knows nothing of frames or tokens: it carries bytes both ways and, when the session ends,
says what it can prove about it (``SessionEvidence``). The forwarding use case does the rest.
"""

from __future__ import annotations

from typing import Protocol

from dunscaith.domain.model.forwarding.evidence import SessionEvidence

__all__ = ["Channel", "SessionEvidence", "Transport", "TransportRefused"]


class TransportRefused(Exception):
    """The transport could not even try (a host name it will not pass to ssh, no ssh binary): nothing ran."""


class Channel(Protocol):
    def send(self, data: bytes) -> bool:
        """Write ``data`` to the remote command's stdin, whole; False once the session can take no more."""
        ...

    def receive(self, timeout: float) -> bytes | None:
        """The next bytes of the remote command's stdout: b"" once it ended; None if none came in ``timeout``."""
        ...

    def close_input(self) -> None:
        """End the remote command's stdin (the forwarded side reads that as "the caller went away")."""
        ...

    def abort(self) -> None:
        """End the session now, from this side: the caller gives up on it."""
        ...

    def finish(self, timeout: float) -> SessionEvidence:
        """Wait up to ``timeout`` for the session to end (aborting it after that); what it proved."""
        ...


class Transport(Protocol):
    name: str  # "openssh", "paramiko", "local"

    def open(self, host: str, command: str, terminal: bool, prompt: bool) -> Channel:
        """Start ``command`` (one line, for the remote login shell) on ``host``.

        ``terminal``: hand the session this process's terminal and ask for one on the remote, so Ctrl-C
        reaches the remote command as SIGINT (stdin is then the terminal, not ``send``). ``prompt``: the
        client may ask the user for a passphrase or password (only after an authentication failure, at a
        terminal); otherwise it never prompts. Never raises for a failed connection: that is evidence.
        """
        ...
