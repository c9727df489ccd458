"""``resubmit JOB --memory 8G ...``: the needs a resubmit gives the new attempt, read from its flags and
asked of the job's cluster before any request is recorded (a need the cluster refuses: exit 2, nothing
made). Only the needs named change; the others stay the current attempt's (docs/job-commands.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import typer

from dunscaith.domain.model.jobs.attempt_needs import changed
from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.resources import (
    Resources,
    parse_count,
    parse_gpus,
    parse_memory,
    parse_text,
    parse_time_limit,
)
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.entrypoints.cli_support import BadInput

if TYPE_CHECKING:
    from dunscaith.domain.services.jobs.submit import RecordJob

CPUS = typer.Option(None, "--cpus", metavar="N", help="the new attempt's cpus (for its one task)")
MEMORY = typer.Option(None, "--memory", metavar="SIZE", help="the new attempt's memory (8G, 512M)")
TIME = typer.Option(None, "--time", metavar="T", help="the new attempt's time limit (90, 1:30:00, 1-00:00:00)")
GPUS = typer.Option(None, "--gpus", metavar="G", help="the new attempt's gpus ([TYPE:]COUNT)")
QUEUE = typer.Option(None, "--queue", metavar="Q", help="the new attempt's queue (Slurm's partition)")
ACCOUNT = typer.Option(None, "--account", metavar="A", help="the new attempt's account")


def parsed(
    cpus: str | None, memory: str | None, time: str | None, gpus: str | None, queue: str | None, account: str | None
) -> Resources | None:
    """The needs named by the flags (None when none is): BadInput, one line, for a value that is none."""
    try:
        count, kind = parse_gpus(gpus, "--gpus") if gpus is not None else (None, None)
        needs = Resources(
            cpus=parse_count(cpus, "--cpus") if cpus is not None else None,
            memory_mb=parse_memory(memory, "--memory") if memory is not None else None,
            time_limit_s=parse_time_limit(time, "--time") if time is not None else None,
            gpus=count,
            gpu_type=kind,
            queue=parse_text(queue, "--queue") if queue is not None else None,
            account=parse_text(account, "--account") if account is not None else None,
        )
    except BadSpec as exc:
        raise BadInput(str(exc)) from None
    return needs if needs else None


def typed(
    cpus: str | None, memory: str | None, time: str | None, gpus: str | None, queue: str | None, account: str | None
) -> list[str]:
    """The flags as given, for a command forwarded to the host that owns the job."""
    pairs = (
        ("--cpus", cpus),
        ("--memory", memory),
        ("--time", time),
        ("--gpus", gpus),
        ("--queue", queue),
        ("--account", account),
    )
    return [word for flag, value in pairs if value is not None for word in (flag, value)]


def refuse_unhonoured(record_job: Callable[[], RecordJob], needs: Resources | None, states: Iterable[JobState]) -> None:
    """BadInput naming the first job whose cluster refuses its new attempt's needs (nothing recorded yet):
    each job's current needs with those given, asked of its cluster's own rules (no request is sent).
    Nothing to ask when no need is given."""
    if needs is None:
        return
    asked: set[tuple[str, Resources, tuple[str, ...]]] = set()
    recording = record_job()
    for state in states:
        current = state.current
        base = current.needs if current is not None and current.needs is not None else state.spec.resources
        new = changed(base, needs)
        key = (state.spec.cluster, new, state.spec.options)
        if key in asked:
            continue
        asked.add(key)
        problem = recording.ready(state.spec.cluster, new, state.spec.options)
        if problem is not None:
            raise BadInput(f"job {state.name}: resubmit refused, nothing was done: {problem}")
