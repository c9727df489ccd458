"""The ``dunscaith`` console script: job commands and the ``remote`` process owner."""

from __future__ import annotations

import sys

import typer

from entrypoints.cli_support import new_app, run
from entrypoints.dunscaith import forwarding, remote
from entrypoints.dunscaith.lazy_commands import LazyCommands

app: typer.Typer = new_app("Run jobs under a foreground supervisor that never sends one twice.")
# The job commands (submit ... prune) are registered by LazyCommands when one of them is used: their
# modules, and the jobs domain behind them, are not imported for `--help` (lazy_commands.LAZY).
app.info.cls = LazyCommands
app.add_typer(remote.app, name="remote")
forwarding.register(app)


@app.callback()
def _root(ctx: typer.Context) -> None:
    # The job container is built by the first command that uses it (edge.container_of), never for
    # `--help`, `remote` or forwarding's two commands: building it imports dependency-injector, pydantic
    # and every adapter, which a wrapped process or a forwarded request must not pay for.
    pass


def main(argv: list[str] | None = None) -> None:
    forwarding.ARGV[:] = sys.argv[1:] if argv is None else argv
    run(app, "dunscaith", argv)
