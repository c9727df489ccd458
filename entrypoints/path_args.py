"""A path given as a command-line argument: an empty one is refused by name, never read as ``.``.

``Path("")`` is ``PosixPath('.')``, so an empty argument (an unset variable in ``"$RECORD"``) would
silently mean the current directory: a manifest "is a directory", a record root or instance directory
becomes the folder the user stands in. Every path argument of both CLIs is parsed by ``path_arg``, as
typer's ``parser``: click then reports "Invalid value for 'NAME': is empty ..." in one line, exit 2.
"""

from __future__ import annotations

from pathlib import Path

import typer

EMPTY = "is empty: give a path (an unset shell variable?)"


def path_arg(value: str | Path) -> Path:
    if isinstance(value, Path):  # a default, or a test calling the command directly
        return value
    if value == "":
        raise typer.BadParameter(EMPTY)
    return Path(value)
