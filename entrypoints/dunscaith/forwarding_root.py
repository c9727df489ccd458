"""Forwarding's composition root: the transport chosen by ``forwarding.transport``, the caller's record of
requests and streams, the use case; and the host's side, started without typer or the job container.

A forwarded command is on the path of every hop (``dunscaith _forwarded TOKEN`` on the owning host): the
whole CLI and job container would add their imports (~0.2 s) to each, so this root names its few
adapters itself, as ``remote_run.RemoteRoot`` does for the process owner. Nothing here imports typer.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from dunscaith.domain.model.forwarding.hidden_flag import FORWARDED_ENV
from dunscaith.entrypoints.dunscaith.install import own_binary

if TYPE_CHECKING:
    from dunscaith.adapters.process.forked_owner import OwnerLaunch, OwnerProcess, PreparedOwner
    from dunscaith.domain.services.forwarding.forward import ForwardCommand
    from dunscaith.entrypoints.dunscaith.root.settings_cache import HopSettings
    from dunscaith.ports.forwarding import SentRequests
    from dunscaith.ports.transport import Transport


def version() -> str:
    from dunscaith.entrypoints.version import VERSION

    return VERSION


# --- the caller's side -------------------------------------------------------------------------------------
def default_transport() -> str:
    """``forwarding.transport`` when it is not set: openssh where an ssh client is installed, else paramiko."""
    from dunscaith.adapters.transport.openssh import OpenSshTransport

    return "openssh" if OpenSshTransport.available() else "paramiko"


def make_transport(section: HopSettings) -> Transport:
    from dunscaith.adapters.transport.openssh import OpenSshTransport

    kind = section.transport or default_transport()
    config = None if section.ssh_config is None else str(section.ssh_config)
    if kind == "paramiko":
        from dunscaith.adapters.transport.paramiko_ssh import ParamikoTransport

        return ParamikoTransport(config_file=config, connect_timeout=section.connect_timeout,
                                 keepalive=section.server_alive)
    return OpenSshTransport(config_file=config, connect_timeout=section.connect_timeout,
                            server_alive_interval=section.server_alive)


def owning_host(job: str) -> tuple[str, str] | None:
    """(host, binary) when ``job``'s pointer reads and names another host than this one; else None."""
    from dunscaith.adapters.host.system import SystemHost
    from dunscaith.adapters.pointers.files import FilePointers, default_pointer_dir
    from dunscaith.domain.model.jobs.ids import JobId
    from dunscaith.domain.model.jobs.pointer import PointerError

    try:
        pointer = FilePointers(default_pointer_dir()).read(JobId(job))
    except (PointerError, ValueError):  # no pointer, a damaged one, a name no pointer can have: typer decides
        return None
    if pointer.root_host == SystemHost().identity():
        return None
    return pointer.host, pointer.binary


def sent_requests_dir(env: Mapping[str, str] | None = None) -> Path:
    from dunscaith.adapters.durable.config_dir import config_home

    return config_home(env) / "dunscaith" / "forwarded"


def sent_requests() -> SentRequests:
    from dunscaith.adapters.transport.sent_requests import FileSentRequests

    return FileSentRequests(sent_requests_dir())


def forward_command(section: HopSettings, transport: Transport | None = None,
                    terminal: bool = False) -> ForwardCommand:
    import secrets

    from dunscaith.adapters.clock.system import SystemClock
    from dunscaith.adapters.signals.posix import SignalInterrupts
    from dunscaith.adapters.transport.caller_streams import StdioStreams
    from dunscaith.domain.services.forwarding.forward import ForwardCommand

    # A signal closes the held input (the host drains its command) and the exit status is still awaited.
    interrupts = SignalInterrupts(always=SignalInterrupts.TERM).install()
    return ForwardCommand(transport or make_transport(section), sent_requests(),
                          StdioStreams(raw_terminal=terminal), SystemClock(), lambda: secrets.token_hex(16),
                          version(), os.uname().nodename, cancellation=interrupts,
                          heartbeat_seconds=section.heartbeat)


def forwarded_env() -> str | None:
    """The request id a forwarded command runs under, if this process is one (it never forwards again)."""
    return os.environ.get(FORWARDED_ENV)


# --- the host's side ---------------------------------------------------------------------------------------
# The whole ``dunscaith`` command line as a function of this process (the front door's ``main``): handed in,
# never imported, so nothing imports the front door back. None: a worker is always exec'd.
Again = Callable[[], None] | None


def _run_owner(launch: OwnerLaunch, ended: Callable[[int], None], again: Again = None) -> int:
    """In the forked child: ``remote run --instance-dir D --cwd C -- ARGV`` with the environment in memory."""
    from dunscaith.entrypoints.dunscaith.remote_run import RunArgs, run_owned

    return run_owned(RunArgs(list(launch.argv), launch.instance_dir, [f"{k}={v}" for k, v in launch.env.items()],
                             None, Path(launch.cwd)), ended, lambda argv, env: in_process(argv, env, again))


# A supervisor lives for hours: it gets an interpreter of its own, shown by ps as what it is
# (`dunscaith supervise JOB`), rather than the forwarded side's command line; the fork saves it nothing.
_SUPERVISING = frozenset({"supervise", "reconcile"})


def in_process(argv: list[str], env: dict[str, str], again: Again) -> Callable[[], int] | None:
    """The forwarded command as a function of this process (the worker's, forked by its owner), when
    ``execve`` would only start this same install again: ``argv[0]`` is this dunscaith and ``env`` is this
    process's own environment but for the hidden flag, which only a command reads, as it runs; so an
    interpreter started anew would begin where this one is (``exec_side``); and it is not a supervisor.
    Else None: it is exec'd."""
    if again is None or argv[:1] != [own_binary()] or FORWARDED_ENV not in env:
        return None
    if argv[1:2] and argv[1] in _SUPERVISING:
        return None
    if {k: v for k, v in env.items() if k != FORWARDED_ENV} != dict(os.environ):
        return None

    def program() -> int:
        sys.argv = list(argv)
        again()
        return 0

    return program


def _start_owner(launch: OwnerLaunch, with_stdin: bool) -> OwnerProcess:
    from dunscaith.adapters.process.forked_owner import ForkedOwner

    return ForkedOwner.start(_run_owner, launch, with_stdin)


def _preloaded(again: Again) -> Callable[[], Callable[[OwnerLaunch, Callable[[int], None]], int]]:
    def preload() -> Callable[[OwnerLaunch, Callable[[int], None]], int]:
        """In the prepared owner: the wrapper's imports (~15-25 ms on the test hosts), done while the
        forwarded side does its own, instead of after it forks."""
        import dunscaith.adapters.clock.system
        import dunscaith.adapters.process.wrapper
        import dunscaith.entrypoints.dunscaith.remote_run  # noqa: F401

        return lambda launch, ended: _run_owner(launch, ended, again)

    return preload


def serve(token: str, prepared: PreparedOwner | None = None) -> int:
    import pwd

    from dunscaith.adapters.process.forwarded_side import ForwardedSide

    return ForwardedSide(token, own_binary(), version(), os.environ, pwd.getpwuid(os.geteuid()).pw_name,
                         _start_owner if prepared is None else prepared.start)()


def main(token: str, again: Again = None) -> None:
    """``again``: the whole command line as a function of this process, for a worker run in-process."""
    from dunscaith.adapters.process.forked_owner import PreparedOwner

    # Forked first, before this side's own imports, and launched only if the request is one to run.
    prepared = PreparedOwner.fork(_preloaded(again))
    try:
        code = serve(token, prepared)
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:  # one line, as every dunscaith error; nothing of the token is printed
        print(f"dunscaith: internal error on the forwarded side: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = 3
    prepared.cancel()  # never launched (refused, a query): it ends having claimed nothing
    from dunscaith.entrypoints.cli_support import end_now

    end_now(code)  # every frame is written (the side drains them) and its files are closed
