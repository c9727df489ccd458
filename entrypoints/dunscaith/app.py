"""The ``dunscaith`` command line: submit, supervise, status, list and the job commands."""

from __future__ import annotations

import sys

import typer

from dunscaith.entrypoints.cli_support import collect_again, finish_help, home_missing, new_app, run, version_flag
from dunscaith.entrypoints.dunscaith import routing
from dunscaith.entrypoints.dunscaith.commands import forwarding, remote
from dunscaith.entrypoints.dunscaith.help_text import EPILOGS, EXAMPLES, EXIT_CODES
from dunscaith.entrypoints.dunscaith.lazy_commands import LazyCommands

app: typer.Typer = new_app("Run jobs under a foreground supervisor that never sends one twice.")
# The job commands (submit ... doctor, config) are registered by LazyCommands when one of them is used:
# their modules, and the jobs domain behind them, are not imported for `--help` (lazy_commands.LAZY).
# Each gets its examples and exit codes then, as the eager ones get them here.
app.info.cls = LazyCommands
app.add_typer(remote.app, name="remote")
forwarding.register(app)
finish_help(app, EXAMPLES, EXIT_CODES, EPILOGS)


@app.callback()
def _root(ctx: typer.Context, version: bool = version_flag("dunscaith")) -> None:
    # The job container is built by the first command that uses it (edge.container_of), never for
    # `--help`, `remote` or forwarding's two commands: building it imports dependency-injector, pydantic
    # and every adapter, which a wrapped process or a forwarded request must not pay for.
    collect_again()  # the command's module is loaded (lazy_commands): the collector on again (front_door)
    if ctx.invoked_subcommand != "remote":  # the front door checked it already; run in-process, it is here
        home_missing(routing.ARGV)


def main(argv: list[str] | None = None) -> None:
    routing.ARGV[:] = sys.argv[1:] if argv is None else argv
    # A store that refuses (damaged, locked too long, a server gone) and a rule of the domain that refuses
    # are the user's to act on: one line and exit 2 wherever they surface, never an internal error.
    run(app, "dunscaith", argv, refusals=_refusals)


def _refusals() -> tuple[type[Exception], ...]:
    from dunscaith.domain.model.jobs.errors import JobsError
    from dunscaith.ports.job_store import StoreError

    return (StoreError, JobsError)
