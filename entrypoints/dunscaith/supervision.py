"""One supervision from the command line (``submit``, ``supervise``, ``reconcile``): the lock, the live view,
the pointer, the sweep as supervision starts, and the ending mapped to its exit code."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import IO, cast

import typer

from dunscaith.domain.model.jobs.exit_codes import ExitCode, for_outcome
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import Attempt, AttemptState, JobState, OutcomeKind, label
from dunscaith.domain.model.shown import reason
from dunscaith.domain.services.jobs.pointer_notes import Fanout
from dunscaith.domain.services.jobs.supervise import Ending, SupervisionEnd
from dunscaith.entrypoints.dunscaith import edge
from dunscaith.entrypoints.dunscaith.edge import PROG
from dunscaith.ports.interrupts import Interrupts


def supervise(ctx: typer.Context, job: JobId, drain: Interrupts, *, fresh: bool, bound: float | None = None,
              stream: IO[str] | None = None, follow: bool = False) -> int:
    store = edge.open_store(ctx)
    state = edge.read_state(ctx, job)
    edge.bound_elsewhere(ctx, state, ["supervise", str(job)])
    adapters = edge.adapters(ctx)
    view = adapters.progress(job=job, stream=cast(IO[str], _DropWhenClosed(stream or sys.stdout)), follow=follow)
    pointer = edge.current_pointer(ctx, state, store)
    if fresh:
        try:
            adapters.pointers().write(pointer)
        except Exception as exc:  # display only; the record is what counts
            edge.say(f"pointer of {job} not written: {reason(exc)}")
    notes = edge.pointer_notes(ctx, pointer)
    supervisor = edge.use_cases(ctx).supervisor(cluster=state.spec.cluster, progress=Fanout([view, notes]))
    with edge.store_errors(), store.lock(job) as lock, view:
        view.show(state)
        edge.sweep(ctx)  # as supervision starts: objects nobody owns are stopped before they start
        if not fresh and state.settled and state.outcome is not None:
            view.line(f"already done: outcome {state.outcome.kind} ({state.outcome.detail})")
        elif not fresh:
            view.line(f"supervising again (attempts so far: {len(state.attempts)}; now {label(state)})")
        end = supervisor.run(job, lock, drain, bound=bound)
    _show_output(ctx, view.line, end.state)
    return _ending(ctx, job, end)


def _show_output(ctx: typer.Context, line: Callable[[str], None], state: JobState | None) -> None:
    """Where the job's output is; when it failed, the last lines of its stderr (the reason, mostly)."""
    current = state.current if state is not None else None
    if state is None or state.outcome is None or current is None or current.object_id is None:
        return
    stdout, stderr = output_paths_of(ctx, state.spec.cluster, current)
    if stdout is not None:
        line(f"stdout: {stdout}")
    if stderr is not None and stderr != stdout:
        line(f"stderr: {stderr}")
    if state.outcome.kind is not OutcomeKind.SUCCEEDED and stderr is not None:
        tail = edge.adapters(ctx).output_files().last_lines(stderr, 10)
        if tail:
            edge.say(f"job {state.name}: last lines of its stderr ({stderr}):")
            for text in tail:
                print(f"  {text}", file=sys.stderr)


def output_paths_of(ctx: typer.Context, cluster: str, attempt: Attempt) -> tuple[str | None, str | None]:
    """The record's paths (from the release), else what the scheduler says now."""
    if attempt.stdout is not None or attempt.stderr is not None or attempt.object_id is None:
        return attempt.stdout, attempt.stderr
    try:
        paths = edge.adapters(ctx).schedulers()(cluster).output_paths(attempt.object_id)
    except Exception:  # display only
        return None, None
    return (paths.stdout, paths.stderr) if paths is not None else (None, None)


def _ending(ctx: typer.Context, job: str, end: SupervisionEnd) -> int:
    state = end.state
    if end.ending is Ending.DRAINED:
        current = state.current if state is not None else None
        unreleased = current is None or current.order is not AttemptState.RELEASED
        if state is not None and state.outcome is None and unreleased:
            print(f"{PROG}: job {job}: supervisor stopped by signal before the release: the job is held and has "
                  f"not started; start it with: {PROG} supervise {job}; or drop it with: {PROG} cancel {job}",
                  file=sys.stderr)
        else:
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
    if state.outcome.kind is OutcomeKind.REFUSED:
        print(f"{PROG}: job {job}: refused: {state.outcome.detail}", file=sys.stderr)
    return int(for_outcome(state.outcome))


class _DropWhenClosed:
    """The live view's stream: once its reader is gone (``| head -1``: EPIPE), output is dropped and
    supervision goes on, so a closed stdout never changes the exit code. The descriptor is pointed at
    /dev/null, so the interpreter's own flush at exit finds nothing to fail on either."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._closed = False

    def write(self, text: str) -> int:
        if not self._closed:
            self._guard(lambda: self._stream.write(text))
        return len(text)

    def flush(self) -> None:
        if not self._closed:
            self._guard(self._stream.flush)

    def isatty(self) -> bool:
        return not self._closed and self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)

    def _guard(self, call: Callable[[], object]) -> None:
        try:
            call()
        except OSError as exc:
            if not isinstance(exc, BrokenPipeError) and exc.errno != errno.EPIPE:
                raise
            self._closed = True
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self._stream.fileno())
                os.close(null)
            except (OSError, ValueError):
                pass
