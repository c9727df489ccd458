"""The ``dunscaith`` console script: job commands and the ``remote`` process owner."""

from __future__ import annotations

import sys

import typer

from domain.model.jobs.errors import JobsError
from entrypoints.cli_support import new_app, run
from entrypoints.dunscaith import commands, doctor, emergency, forwarding, remote, status, submit
from ports.job_store import StoreError

app: typer.Typer = new_app("Run jobs under a foreground supervisor that never sends one twice.")
app.add_typer(remote.app, name="remote")
submit.register(app)
status.register(app)
app.command("stop")(emergency.stop)
commands.register(app)
doctor.register(app)
forwarding.register(app)


@app.callback()
def _root(ctx: typer.Context) -> None:
    # `remote` owns one process and needs none of the job machinery: building the job container for it
    # would add its imports to the start-up of every wrapped process.
    # Forwarding's two commands build only what they use, for the same reason.
    if ctx.obj is None and ctx.invoked_subcommand not in ("remote", "_forwarded", "forwarded"):
        from entrypoints.dunscaith.container import Container

        container = Container()
        ctx.obj = container
        ctx.call_on_close(container.shutdown_resources)


def main(argv: list[str] | None = None) -> None:
    forwarding.ARGV[:] = sys.argv[1:] if argv is None else argv
    # A store that refuses (damaged, locked too long, a server gone) and a rule of the domain that refuses
    # are the user's to act on: one line and exit 2 wherever they surface, never an internal error.
    run(app, "dunscaith", argv, refusals=(StoreError, JobsError))
