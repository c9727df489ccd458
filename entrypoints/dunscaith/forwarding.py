"""Forwarding's commands: ``dunscaith forwarded REQUEST_ID``, the hidden host side, and the routing every job
command goes through (docs/forwarding.md). The adapters are built in ``forwarding_root``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

import typer

from dunscaith.entrypoints.cli_support import BadInput

if TYPE_CHECKING:
    from dunscaith.domain.model.jobs.pointer import Pointer
    from dunscaith.domain.model.jobs.record import HostIdentity
    from dunscaith.entrypoints.dunscaith.settings_cache import HopSettings

PROG = "dunscaith"
EXIT_QUERY_FAILED = 6
# The words the command line was parsed from (app.main sets them): a forwarded command sends exactly these.
ARGV: list[str] = []


def forward_and_exit(section: HopSettings, host: str, binary: str, argv: Sequence[str], job: str) -> NoReturn:
    """Run ``argv`` on ``host`` (the job's owning host) and exit as it did there."""
    from dunscaith.entrypoints.dunscaith.routing import forward

    raise typer.Exit(forward(section, host, binary, argv, job))


def route(pointer: Pointer | None, here: HostIdentity, section: HopSettings, job: str,
          words: Sequence[str]) -> None:
    """If ``job``'s pointer names another host, run this very command there and exit as it did there.

    Routing is the one thing a pointer decides (seed 000): the owning host's name and the dunscaith path
    there. No pointer (or an unreadable one, given as None): the record here decides, as before.
    """
    if pointer is None or pointer.root_host == here:
        return
    argv = list(ARGV) or list(words)  # the user's own words, exactly as typed
    forward_and_exit(section, pointer.host, pointer.binary, argv, job)


def register(app: typer.Typer) -> None:
    app.command("_forwarded", hidden=True)(serve_command)
    app.command("forwarded")(forwarded_command)


def serve_command(token: str = typer.Argument(..., metavar="TOKEN")) -> None:
    """Internal: the host's side of a forwarded command. Never call it yourself."""
    from dunscaith.entrypoints.dunscaith.forwarding_root import serve

    raise typer.Exit(serve(token))


def forwarded_command(request_id: str = typer.Argument(..., metavar="REQUEST_ID")) -> None:
    """Ask the owning host what became of a forwarded command that "may have run"; never runs it again."""
    from dunscaith.domain.model.forwarding.recovery import describe
    from dunscaith.domain.model.forwarding.verdict import Kind
    from dunscaith.entrypoints.dunscaith.forwarding_root import forward_command, sent_requests
    from dunscaith.entrypoints.dunscaith.settings import load_settings
    from dunscaith.ports.forwarding import UnknownRequest

    section = load_settings().forwarding
    try:
        sent, received = sent_requests().read(request_id)
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
