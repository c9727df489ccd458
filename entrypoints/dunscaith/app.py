"""The ``dunscaith`` console script: job commands and the ``remote`` process owner."""

from __future__ import annotations

import typer

from entrypoints.cli_support import new_app, run
from entrypoints.dunscaith import commands, emergency, remote, status, submit

app: typer.Typer = new_app("Run jobs under a foreground supervisor that never sends one twice.")
app.add_typer(remote.app, name="remote")
submit.register(app)
status.register(app)
app.command("stop")(emergency.stop)
commands.register(app)


@app.callback()
def _root(ctx: typer.Context) -> None:
    # The job container is built by the first command that uses it (edge.container_of), never for
    # `--help` or `remote`: building it imports dependency-injector, pydantic and every adapter.
    pass


def main(argv: list[str] | None = None) -> None:
    run(app, "dunscaith", argv)
