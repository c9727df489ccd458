"""What may be started as a program: one rule for a job's command and for ``remote run``'s."""

from __future__ import annotations

from collections.abc import Sequence


def program_problem(argv: Sequence[str]) -> str | None:
    """Why ``argv`` cannot be started (``execve`` refuses it, after a job is already recorded); None when
    it can be. An empty first word names no program, and no argument can hold a NUL byte."""
    if not argv:
        return "nothing to run: give a program after --"
    if argv[0] == "":
        return "the program to run is empty ('' after --): give a program's name or path"
    for number, word in enumerate(argv):
        if "\0" in word:
            return f"argument {number} of the program holds a NUL byte, which no program can be given"
    return None
