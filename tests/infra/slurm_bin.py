"""A ``bin_dir`` for a Slurm cluster config: the real Slurm commands, some replaced by test scripts.

Each command is a small ``#!/bin/sh`` script. By default it execs the real program; a test replaces
any of them with its own body (lose a reply, answer empty, fail, hang). With ``count_to`` every call
appends one line ``<command> <args>`` to that file first: the counting shim of the benchmarks.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

COMMANDS = ("sbatch", "squeue", "scontrol", "scancel", "sacct")
REAL = {name: f"/usr/bin/{name}" for name in COMMANDS}


def make_bin_dir(path: Path, bodies: Mapping[str, str] | None = None, *, count_to: Path | None = None) -> Path:
    """Write the five commands into ``path``; ``bodies[name]`` replaces the default ``exec <real> "$@"``."""
    path.mkdir(parents=True, exist_ok=True)
    for name in COMMANDS:
        body = (bodies or {}).get(name, f'exec {REAL[name]} "$@"')
        count = f'printf "%s\\n" "{name} $*" >> {shlex.quote(str(count_to))}\n' if count_to else ""
        script = path / name
        script.write_text(f"#!/bin/sh\n{count}{body}\n")
        os.chmod(script, 0o755)
    return path


def lose_reply_after_real_sbatch() -> str:
    """sbatch's reply lost: the real sbatch makes the job, then the client dies without printing."""
    return f'{REAL["sbatch"]} "$@" >/dev/null 2>&1\nkill -9 $$'


def calls(count_file: Path) -> list[str]:
    try:
        # Not splitlines(): squeue's --Format argument holds \x1e and \x1f, which it would split on.
        return [line for line in count_file.read_text().split("\n") if line]
    except FileNotFoundError:
        return []
