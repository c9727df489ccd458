"""One supervision of a sweep from the command line (``submit --array/--each``, ``supervise NAME``,
``supervise --all``): every element this process can take, in one loop, shown as one live view, its
ending mapped to the exit code."""

from __future__ import annotations

from typing import IO

import typer

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.ports.interrupts import Interrupts


def supervise_sweep(ctx: typer.Context, sweep: JobId, drain: Interrupts, *, fresh: bool, as_json: bool = False,
                    stream: IO[str] | None = None, job_exit: bool = False) -> int:
    """Supervise every element of ``sweep`` that no live supervisor holds, to its outcome; the exit code.
    ``fresh``: the sweep was just recorded. ``as_json``: the live view on stderr, the result on stdout."""
    raise BadInput(f"sweep {sweep}: sweeps are recorded but not yet supervised by this build")
