"""One supervision from the command line (``submit``, ``supervise``, ``reconcile``): the lock, the live view,
the pointer, the sweep as supervision starts, and the ending mapped to its exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO

import typer

from domain.model.jobs.exit_codes import ExitCode, for_outcome
from domain.model.jobs.ids import JobId
from domain.model.jobs.state import JobState
from domain.services.jobs.pointer_notes import Fanout
from domain.services.jobs.supervise import Ending, SupervisionEnd
from entrypoints.dunscaith import edge
from entrypoints.dunscaith.edge import PROG
from ports.interrupts import Interrupts
from ports.scheduler import Scheduler


def supervise(ctx: typer.Context, job: JobId, drain: Interrupts, *, fresh: bool, bound: float | None = None,
              stream: IO[str] | None = None) -> int:
    store = edge.open_store(ctx)
    state = edge.read_state(ctx, job)
    edge.bound_elsewhere(ctx, state)
    adapters = edge.adapters(ctx)
    view = adapters.progress(job=job, stream=stream)
    pointer = edge.current_pointer(ctx, state, store)
    if fresh:
        try:
            adapters.pointers().write(pointer)
        except Exception as exc:  # display only; the record is what counts
            edge.say(f"pointer of {job} not written: {type(exc).__name__}: {exc}")
    notes = edge.pointer_notes(ctx, pointer)
    supervisor = edge.use_cases(ctx).supervisor(cluster=state.spec.cluster, progress=Fanout([view, notes]))
    with edge.store_errors(), store.lock(job) as lock, view:
        edge.sweep(ctx)  # as supervision starts: objects nobody owns are stopped before they start
        if not fresh and state.settled and state.outcome is not None:
            view.line(f"already settled: outcome {state.outcome.kind} ({state.outcome.detail})")
        elif not fresh:
            view.line(f"supervising (attempts so far: {len(state.attempts)})")
        end = supervisor.run(job, lock, drain, bound=bound)
    _show_output(view.line, end.state, adapters.schedulers()(state.spec.cluster))
    return _ending(ctx, job, end)


def _show_output(line: Callable[[str], None], state: JobState | None, scheduler: Scheduler) -> None:
    """Where the job's output is, when its scheduler says (docs/local-scheduler.md)."""
    current = state.current if state is not None else None
    if state is None or state.outcome is None or current is None or current.object_id is None:
        return
    paths = scheduler.output_paths(current.object_id)
    if paths is not None and paths.stdout is not None:
        line(f"output: {paths.stdout}")


def _ending(ctx: typer.Context, job: str, end: SupervisionEnd) -> int:
    state = end.state
    if end.ending is Ending.DRAINED:
        print(f"{PROG}: job {job}: supervisor stopped by signal; everything received is committed and the job "
              f"continues Unattended; reattach with: {PROG} supervise {job}", file=sys.stderr)
        edge.end_by_signal(ctx)
        return ExitCode.INTERNAL  # not reached: the signal ends the process
    if end.ending is Ending.GAVE_UP:
        print(f"{PROG}: job {job}: the supervisor gave up ({end.detail}); the job is Unattended; "
              f"reattach with: {PROG} supervise {job}", file=sys.stderr)
        return ExitCode.GAVE_UP
    if end.ending is Ending.OUTSTANDING:
        outcome = f" (outcome: {state.outcome.kind})" if state and state.outcome else ""
        print(f"{PROG}: job {job}: work outstanding after supervise.wait{outcome}:", file=sys.stderr)
        for left in end.left:
            print(f"  {left.what}", file=sys.stderr)
        print(f"  carry it on with: {PROG} supervise {job}", file=sys.stderr)
        return ExitCode.OUTSTANDING
    assert state is not None and state.outcome is not None
    return int(for_outcome(state.outcome))
