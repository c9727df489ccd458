"""The ``qdevices`` console script's front door: one path (the typer app), imported under the Ctrl-C guard."""

from __future__ import annotations

from dunscaith.entrypoints.cli_support import launch


def main() -> None:
    launch("qdevices", "dunscaith.entrypoints.qdevices.app")
