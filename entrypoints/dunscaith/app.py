"""The ``dunscaith`` console script: job commands and the ``remote`` process owner."""

from __future__ import annotations

import typer

from entrypoints.cli_support import new_app, run
from entrypoints.dunscaith import remote

app: typer.Typer = new_app("Run jobs under a foreground supervisor that never sends one twice.")
app.add_typer(remote.app, name="remote")


def main(argv: list[str] | None = None) -> None:
    run(app, "dunscaith", argv)
