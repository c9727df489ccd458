"""Grid Engine's clients, run by the schedulers' bounded runner (adapters/scheduler/client_command.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from dunscaith.adapters.scheduler.client_command import CommandRunner


def first_line(stdout: str, stderr: str) -> str:
    """What a Grid Engine client said on a failure: its first line, stderr before stdout (qdel and qacct
    answer some refusals on stdout)."""
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    return lines[0] if lines else ""


def client_runner(bin_dir: Path | None, env: Mapping[str, str]) -> CommandRunner:
    """Runs Grid Engine's programs (in ``bin_dir`` or on PATH) with the cluster's environment."""
    return CommandRunner(bin_dir, env, said=first_line)
