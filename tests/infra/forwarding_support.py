"""Helpers shared by the forwarding tests: a caller's streams in memory, transports to the test hosts."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.transport.openssh import OpenSshTransport
from dunscaith.adapters.transport.sent_requests import FileSentRequests
from dunscaith.domain.services.forwarding.forward import ForwardCommand
from dunscaith.ports.transport import Transport
from tests.infra.ssh_hosts import SshHosts, SshHostsUnavailable, User, shared_hosts


@dataclass
class MemoryStreams:
    stdin: bytes = b""
    terminal: bool = False
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    _given: bool = False

    def out(self, data: bytes) -> None:
        self.stdout += data

    def err(self, data: bytes) -> None:
        self.stderr += data

    def read_input(self) -> bytes | None:
        if self._given:
            return b""
        self._given = True
        return self.stdin or b""

    def at_terminal(self) -> bool:
        return self.terminal


class HeldStdin(MemoryStreams):
    """A stdin that never ends (a caller whose own stdin is a quiet pipe)."""

    def read_input(self) -> bytes | None:
        return None


def hosts_or_skip() -> SshHosts:
    try:
        return shared_hosts()
    except SshHostsUnavailable as exc:
        pytest.skip(str(exc))


def openssh_for(hosts: SshHosts, user: User | None = None, *options: str) -> OpenSshTransport:
    user = user or hosts.user
    return OpenSshTransport(config_file=str(hosts.client_config), connect_timeout=10, server_alive_interval=1,
                            server_alive_count=3, options=(f"User={user.name}", f"IdentityFile={user.key}",
                                                           *options))


def forwarder(transport: Transport, tmp_path: Path, streams: MemoryStreams | None = None, version: str = "",
              heartbeat: float = 0.5) -> tuple[ForwardCommand, MemoryStreams, FileSentRequests]:
    from dunscaith.entrypoints.dunscaith.forwarding_root import version as installed

    streams = streams if streams is not None else MemoryStreams()
    sent = FileSentRequests(tmp_path / "config" / "dunscaith" / "forwarded")
    command = ForwardCommand(transport, sent, streams, SystemClock(), lambda: secrets.token_hex(16),
                             version or installed(), "test-caller", heartbeat_seconds=heartbeat, drain_seconds=10)
    return command, streams, sent
