"""The transport contract, over the local transport and the real sshd hosts (OpenSSH client, paramiko).

A transport carries bytes both ways, holds the remote's stdin open until told, reports the session's
exit status, and says what it can prove when a session fails.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from dunscaith.adapters.transport.local import LocalTransport
from dunscaith.domain.model.forwarding.evidence import Failure
from dunscaith.ports.transport import Channel, Transport
from tests.infra.forwarding_support import hosts_or_skip, openssh_for


@dataclass
class Target:
    transport: Transport
    host: str
    hostname: str  # what `hostname` prints there
    unreachable: Callable[[], tuple[Transport, str]] | None  # a transport and host that cannot connect
    cut: Callable[[], Callable[[], None]] | None = None  # cut the host's link; returns how to restore it


def local() -> Target:
    return Target(LocalTransport(shell="/bin/sh"), "here", socket.gethostname(), None)


def openssh() -> Target:
    hosts = hosts_or_skip()
    return Target(openssh_for(hosts), "login3", "login3", lambda: (openssh_for(hosts, None, "Port=2"), "login1"),
                  _cutter(hosts, "login3"))


def _cutter(hosts: object, host: str) -> Callable[[], Callable[[], None]]:
    def cut() -> Callable[[], None]:
        hosts.cut_link(host)  # type: ignore[attr-defined]
        return lambda: hosts.restore_link(host)  # type: ignore[attr-defined]

    return cut


def paramiko() -> Target:
    from dunscaith.adapters.transport.paramiko_ssh import ParamikoTransport

    hosts = hosts_or_skip()

    def make(port: int | None = None) -> ParamikoTransport:
        return ParamikoTransport(config_file=str(hosts.client_config), connect_timeout=10, keepalive=1,
                                 user=hosts.user.name, key_file=str(hosts.user.key), port=port)

    return Target(make(), "login3", "login3", lambda: (make(2), "login1"), _cutter(hosts, "login3"))


SSHD = [pytest.mark.slow, pytest.mark.sshd]


@pytest.fixture(params=[pytest.param(local, id="local"), pytest.param(openssh, id="openssh", marks=SSHD),
                        pytest.param(paramiko, id="paramiko", marks=SSHD)])
def target(request: pytest.FixtureRequest) -> Target:
    return request.param()  # type: ignore[no-any-return]


def read_all(channel: Channel, until: bytes | None = None, timeout: float = 30) -> bytes:
    import time

    got = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chunk = channel.receive(0.2)
        if chunk == b"":
            return got
        if chunk:
            got += chunk
            if until is not None and until in got:
                return got
    raise AssertionError(f"no end of output within {timeout}s; got {got!r}")


def test_the_command_runs_on_the_host_and_its_stdout_arrives_unchanged(target: Target) -> None:
    channel = target.transport.open(target.host, "hostname; printf 'a\\000b\\n'", False, False)
    channel.close_input()
    assert read_all(channel).endswith(f"{target.hostname}\na\0b\n".encode())
    evidence = channel.finish(10)
    assert evidence.reached and evidence.host_exit == 0


def test_the_session_s_exit_status_is_reported(target: Target) -> None:
    channel = target.transport.open(target.host, "echo oops >&2; exit 7", False, False)
    channel.close_input()
    read_all(channel)
    evidence = channel.finish(10)
    assert evidence.host_exit == 7 and evidence.detail.endswith("oops")


def test_stdin_reaches_the_command_and_stays_open_until_closed(target: Target) -> None:
    channel = target.transport.open(target.host, "cat; echo input-ended", False, False)
    assert channel.send(b"first\n")
    assert read_all(channel, until=b"first\n").endswith(b"first\n")
    assert channel.receive(0.5) is None  # still open: cat has not seen an end
    assert channel.send(b"second\n")
    channel.close_input()
    assert read_all(channel).endswith(b"second\ninput-ended\n")
    assert channel.finish(10).host_exit == 0


def test_an_aborted_session_has_no_exit_status(target: Target) -> None:
    channel = target.transport.open(target.host, "echo started; cat", False, False)
    read_all(channel, until=b"started")
    channel.abort()
    evidence = channel.finish(10)
    assert evidence.reached and evidence.host_exit is None


def test_a_host_that_cannot_be_reached_is_proved_never_reached(target: Target) -> None:
    if target.unreachable is None:
        pytest.skip("the local transport always reaches its host")
    transport, host = target.unreachable()
    channel = transport.open(host, "echo should-not-run", False, False)
    read_all(channel)
    evidence = channel.finish(10)
    assert evidence.accounted and not evidence.reached and evidence.failure is Failure.CONNECTION


def test_a_dead_peer_is_noticed_by_the_transport_itself(target: Target) -> None:
    """A cut link gives no end of stream: the client's keepalives (ServerAlive; paramiko's keepalive with
    TCP_USER_TIMEOUT) must end the session, with no exit status, without the protocol's heartbeat."""
    if target.cut is None:
        pytest.skip("a local session has no link to cut")
    channel = target.transport.open(target.host, "echo started; cat", False, False)
    read_all(channel, until=b"started")
    restore = target.cut()
    try:
        assert channel.send(b"into the void\n") in (True, False)
        read_all(channel, timeout=60)  # ends (b"") well within the minute
        assert channel.finish(10).host_exit is None
    finally:
        restore()
