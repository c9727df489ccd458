"""The ``qdevices`` console script: live runs of metered quantum jobs."""

from __future__ import annotations

import typer

from entrypoints.cli_support import new_app, run

app: typer.Typer = new_app("Send orders to quantum computing sites: never twice, never cancelled, always in a record.")


@app.command("jobs")
def jobs(record: str) -> None:
    """Show the orders of a record (not written yet)."""
    raise typer.Exit(3)


def main(argv: list[str] | None = None) -> None:
    run(app, "qdevices", argv)
