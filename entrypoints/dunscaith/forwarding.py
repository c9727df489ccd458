"""Forwarding: ``dunscaith forwarded REQUEST_ID``, the hidden host side, and the transport from settings.

docs/forwarding.md is the user's side of it.
"""

from __future__ import annotations

import os
import pwd
import secrets
import socket
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from entrypoints.cli_support import BadInput
from entrypoints.dunscaith.forwarded_entry import version

if TYPE_CHECKING:
    from domain.model.jobs.pointer import Pointer
    from domain.model.jobs.record import HostIdentity
    from domain.services.forwarding.forward import ForwardCommand, Forwarded
    from entrypoints.dunscaith.settings import ForwardingSection
    from ports.transport import Transport

PROG = "dunscaith"
EXIT_QUERY_FAILED = 6


def _user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


def make_transport(section: ForwardingSection) -> Transport:
    from adapters.transport.openssh import OpenSshTransport

    kind = section.transport or ("openssh" if OpenSshTransport.available() else "paramiko")
    config = None if section.ssh_config is None else str(section.ssh_config)
    if kind == "paramiko":
        from adapters.transport.paramiko_ssh import ParamikoTransport

        return ParamikoTransport(config_file=config, connect_timeout=section.connect_timeout,
                                 keepalive=section.server_alive)
    return OpenSshTransport(config_file=config, connect_timeout=section.connect_timeout,
                            server_alive_interval=section.server_alive)


def sent_requests_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(env.get("HOME") or Path.home()) / ".config"
    return base / "dunscaith" / "forwarded"


def forward_command(section: ForwardingSection, transport: Transport | None = None,
                    terminal: bool = False) -> ForwardCommand:
    from adapters.clock.system import SystemClock
    from adapters.transport.caller_streams import StdioStreams
    from adapters.transport.sent_requests import FileSentRequests
    from domain.services.forwarding.forward import ForwardCommand
    from entrypoints.dunscaith.drain import SignalDrain

    drain = SignalDrain(drain_seconds=3600)
    drain.install()
    return ForwardCommand(transport or make_transport(section), FileSentRequests(sent_requests_dir()),
                          StdioStreams(raw_terminal=terminal), SystemClock(), lambda: secrets.token_hex(16),
                          version(), socket.gethostname(), cancellation=drain, heartbeat_seconds=section.heartbeat)


def refuse_if_forwarded(job: str, host: str) -> None:
    """A forwarded command never forwards again (an alias pointing back at a forwarder cannot recurse)."""
    from adapters.process.forwarded_side import FORWARDED_ENV

    if os.environ.get(FORWARDED_ENV):
        raise BadInput(f"the record of job {job} is on host {host}, and this command was itself forwarded here "
                       f"(request {os.environ[FORWARDED_ENV]}): a forwarded command never forwards again")


def forward_and_exit(section: ForwardingSection, host: str, binary: str, argv: Sequence[str], job: str) -> NoReturn:
    """Run ``argv`` on ``host`` (the job's owning host) and exit as it did there."""
    from domain.model.forwarding.request import UnsafeBinaryPath
    from ports.transport import TransportRefused

    refuse_if_forwarded(job, host)
    try:
        transport = make_transport(section)
        # At a terminal, ssh is handed it (-tt) so Ctrl-C reaches the remote as SIGINT; paramiko cannot.
        terminal = os.isatty(0) and transport.name == "openssh"
        result = forward_command(section, transport, terminal)(host, binary, argv, terminal)
    except (UnsafeBinaryPath, TransportRefused) as exc:
        raise BadInput(f"{exc}; nothing ran on {host}") from None
    report(result)
    raise typer.Exit(result.verdict.exit_code)


def route(pointer: Pointer | None, here: HostIdentity, section: ForwardingSection, job: str,
          words: Sequence[str]) -> None:
    """If ``job``'s pointer names another host, run this very command there and exit as it did there.

    Routing is the one thing a pointer decides (seed 000): the owning host's name and the dunscaith path
    there. No pointer (or an unreadable one, given as None): the record here decides, as before.
    """
    if pointer is None or pointer.root_host == here:
        return
    from entrypoints.dunscaith import jobs

    argv = list(jobs.RAW_ARGV) or list(words)  # the user's own words, exactly as typed
    forward_and_exit(section, pointer.host, pointer.binary, argv, job)


def route_by(pointers: Any, host: Any, section: ForwardingSection, job: str, words: Sequence[str]) -> None:
    """``route`` with the job's pointer read from ``pointers`` and this machine's identity from ``host``."""
    from domain.model.jobs.ids import JobId

    try:
        pointer = pointers.read(JobId(job))
        here = host.identity()
    except Exception:  # no pointer or an unreadable one: the record here decides
        return
    route(pointer, here, section, job, words)


def report(result: Forwarded) -> None:
    if result.message is not None:
        print(f"{PROG}: {result.message}", file=sys.stderr, flush=True)


def register(app: typer.Typer) -> None:
    app.command("_forwarded", hidden=True)(serve_command)
    app.command("forwarded")(forwarded_command)


def serve_command(token: str = typer.Argument(..., metavar="TOKEN")) -> None:
    """Internal: the host's side of a forwarded command. Never call it yourself."""
    from entrypoints.dunscaith.forwarded_entry import serve

    raise typer.Exit(serve(token))


def forwarded_command(request_id: str = typer.Argument(..., metavar="REQUEST_ID")) -> None:
    """Ask the owning host what became of a forwarded command that "may have run"; never runs it again."""
    from adapters.transport.sent_requests import FileSentRequests
    from domain.model.forwarding.recovery import describe
    from domain.model.forwarding.verdict import Kind
    from entrypoints.dunscaith.settings import load_settings
    from ports.forwarding import UnknownRequest

    section = load_settings().forwarding
    try:
        sent, received = FileSentRequests(sent_requests_dir()).read(request_id)
    except UnknownRequest as exc:
        raise BadInput(str(exc)) from None
    result = forward_command(section).query(sent)
    if result.verdict.kind is not Kind.COMPLETED or result.report is None:
        text = result.message or f"{sent.host} did not answer the question"
        print(f"{PROG}: asking {sent.host} about request {request_id}: {text}. Nothing was run; ask again.",
              file=sys.stderr)
        raise typer.Exit(EXIT_QUERY_FAILED)
    for line in describe(sent, result.report, received):
        print(line)


