"""One supervision from the command line (``submit``, ``supervise``, ``reconcile``): the live view given to
the use case (``SuperviseJob``: the record, the pointer, the lock, the sweep, the supervisor), and its
ending shown and mapped to its exit code."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import IO, cast

import typer

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.exit_codes import ExitCode, for_outcome
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import AttemptState, OutcomeKind
from dunscaith.domain.services.jobs.supervise import Ending, SupervisionEnd
from dunscaith.domain.services.jobs.supervise_job import BoundElsewhere, Supervised
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge
from dunscaith.entrypoints.dunscaith.edge import PROG
from dunscaith.ports.interrupts import Interrupts


def supervise(ctx: typer.Context, job: JobId, drain: Interrupts, *, fresh: bool, bound: float | None = None,
              stream: IO[str] | None = None, follow: bool = False) -> int:
    supervise_job = edge.use_cases(ctx).supervise_job(on_problem=edge.say, on_sweep=edge.report_sweep)
    with edge.store_errors(ctx, job):
        try:
            done = supervise_job(job, drain, fresh=fresh, bound=bound,
                                 stream=cast(IO[str], _DropWhenClosed(stream or sys.stdout)), follow=follow)
        except BoundElsewhere as elsewhere:  # a local-scheduler job of another host: supervised there
            edge.forward_bound(ctx, elsewhere, ["supervise", str(job)])
        except JobsError as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}; nothing was done to the job") from None
    _show_output(done.view.line, done)
    return _ending(ctx, job, done.end)


def _show_output(line: Callable[[str], None], done: Supervised) -> None:
    """Where the job's output is; when it failed, the last lines of its stderr (the reason, mostly)."""
    if done.stdout is not None:
        line(f"stdout: {done.stdout}")
    if done.stderr is not None and done.stderr != done.stdout:
        line(f"stderr: {done.stderr}")
    state = done.end.state
    if done.stderr_tail and state is not None:
        edge.say(f"job {state.name}: last lines of its stderr ({done.stderr}):")
        for text in done.stderr_tail:
            print(f"  {text}", file=sys.stderr)


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
