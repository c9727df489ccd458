"""``dunscaith remote``: own a process, forward its stdout, record how it ended."""

from __future__ import annotations

import typer

from entrypoints.cli_support import new_app

app: typer.Typer = new_app("Own a process: start it in its own group and record what it did.")


@app.command("status")
def status(directory: str) -> None:
    """Report the state of an instance directory (not written yet)."""
    raise typer.Exit(3)
