"""Forwarding's commands: ``dunscaith forwarded REQUEST_ID`` and the hidden host side (docs/forwarding.md).
The adapters are built in ``forwarding_root``; the routing every job command goes through is ``routing``
(before typer) and ``edge`` (a command that finds its job is another host's)."""

from __future__ import annotations

import sys

import typer

from dunscaith.entrypoints.cli_support import BadInput

PROG = "dunscaith"
EXIT_QUERY_FAILED = 6
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
    from dunscaith.entrypoints.dunscaith.root.settings import load_settings
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
