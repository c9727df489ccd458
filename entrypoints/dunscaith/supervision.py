"""One supervision from the command line (``submit``, ``supervise``, ``reconcile``): the live view given to
the use case (``SuperviseJob``: the record, the pointer, the lock, the sweep, the supervisor), and its
ending shown and mapped to its exit code."""

from __future__ import annotations

import errno
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, NamedTuple, cast

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.exit_codes import ExitCode, for_outcome, for_signal
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.job_result import ExitFrom
from dunscaith.domain.model.jobs.state import AttemptState, OutcomeKind
from dunscaith.domain.services.jobs.supervise import Ending, SupervisionEnd
from dunscaith.domain.services.jobs.supervise_job import BoundElsewhere, Supervised
from dunscaith.domain.services.jobs.sweep_lock import SweepSupervisedElsewhere
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge, render
from dunscaith.entrypoints.dunscaith.edge import PROG, At
from dunscaith.ports.interrupts import Interrupts

if TYPE_CHECKING:
    from dunscaith.domain.services.jobs.notify_sweep import NotifySweep
    from dunscaith.domain.services.jobs.supervise_job import SuperviseJob
    from dunscaith.domain.services.jobs.supervise_sweep import SuperviseSweep


class Supervising(NamedTuple):
    """The use cases a supervision from the command line is given (each a maker, as ``@edge.injected``
    hands a command its use case): one job's, a sweep's, a sweep's notice."""

    supervise_job: Callable[..., SuperviseJob]
    supervise_sweep: Callable[..., SuperviseSweep]
    notify_sweep: Callable[[], NotifySweep]

    def job(self) -> SuperviseJob:
        """One job's supervision, its problems and the residual sweep's report said on stderr."""
        return self.supervise_job(on_problem=edge.say, on_sweep=edge.report_sweep)


class _Exit(NamedTuple):  # not a dataclass: ~0.4 ms less to define on a lean path's start
    """How the supervision ends: its code, whose it is, and (not the job's outcome) the error it reports."""

    code: int
    source: ExitFrom = ExitFrom.DUNSCAITH
    error: str | None = None  # the --json error object's code
    message: str = ""
    by_signal: bool = False  # the process ends by the signal that drained it


def supervise(at: At, job: JobId, drain: Interrupts, supervise_job: SuperviseJob, *, fresh: bool,
              bound: float | None = None,
              stream: IO[str] | None = None, follow: bool = False, as_json: bool = False,
              job_exit: bool = False) -> int:
    """Supervise ``job`` to its ending and return the exit code. ``as_json``: the live view on stderr and
    the result object (docs/json.md) on stdout; ``job_exit``: the job's own exit code once it has its
    outcome (--job-exit-code, docs/exit-codes.md)."""
    if as_json:
        stream = sys.stderr
    shown_in = cast(IO[str], DropWhenClosed(stream or sys.stdout))
    with edge.store_errors(at, job):
        try:
            done = supervise_job(job, drain, fresh=fresh, bound=bound, stream=shown_in, follow=follow)
        except BoundElsewhere as elsewhere:  # a local-scheduler job of another host: supervised there
            edge.forward_bound(at, elsewhere, ["supervise", str(job)])
        except SweepSupervisedElsewhere as exc:  # its sweep's live supervisor holds it, started or not
            raise BadInput(str(exc)) from None
        except JobsError as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}; nothing was done to the job") from None
    # --follow showed the output as it came; reconcile (bounded) carries on outstanding work, not the job's
    _show_output(done.view.line, done, shown_in if not follow and bound is None else None)
    ended = _ending(job, done, drain, job_exit)
    if as_json:
        shown = render.result_json(done.result, str(job), done.end.ending, [o.what for o in done.end.left],
                                   ended.code, ended.source)
        if ended.error is not None:
            shown["error"] = {"code": ended.error, "message": ended.message, "exit_code": ended.code}
        print(json.dumps(shown, indent=2), flush=True)
    if ended.by_signal:
        edge.end_by_signal(at)
        return ExitCode.INTERNAL  # not reached: the signal ends the process
    return ended.code


def _show_output(line: Callable[[str], None], done: Supervised, tails_in: IO[str] | None) -> None:
    """Where the job's output is; the end of it (``tails_in``: in that stream); when it failed, the last
    lines of its stderr (the reason, mostly)."""
    if done.stdout is not None:
        line(f"stdout: {done.stdout}")
    if done.stderr is not None and done.stderr != done.stdout:
        line(f"stderr: {done.stderr}")
    if tails_in is not None and done.end.state is not None:
        _show_tails(done.end.state.name, done, tails_in)
    state = done.end.state
    if done.stderr_tail and state is not None:
        edge.say(f"job {state.name}: last lines of its stderr ({done.stderr}):")
        for text in done.stderr_tail:
            print(f"  {text}", file=sys.stderr)


def _show_tails(job: str, done: Supervised, out: IO[str]) -> None:
    """The end of the job's output under a line naming the job (as srun shows a short job's output), and
    the command that shows all of it; in the live view's stream, never in a --json document."""
    for tail in done.output_tails:
        logs = f"{PROG} logs {'--stderr ' if tail.stream == 'stderr' else ''}{job}"
        its = f"its {tail.stream}"
        if tail.problem:
            heading = f"job {job}: {its} does not read here ({tail.problem}); try: {logs}"
        elif tail.cut:
            many = f"{len(tail.lines)} lines" if len(tail.lines) != 1 else "line"
            heading = f"job {job}: the last {many} of {its} (all of it: {logs}):"
        elif not tail.lines:
            heading = f"job {job}: {its} is empty"
        else:
            heading = f"job {job}: {its} ({logs} shows it again):"
        try:
            print(heading, file=out)
            for text in tail.lines:
                print(f"  {text}", file=out)
            out.flush()
        except (OSError, ValueError):  # a closed reader: display only
            pass


def _ending(job: str, done: Supervised, drain: Interrupts, job_exit: bool) -> _Exit:
    end = done.end
    state = end.state
    gated = _gated_ending(job, end, drain)
    if gated is not None:
        return gated
    if end.ending is Ending.DRAINED:
        current = state.current if state is not None else None
        unreleased = current is None or current.order is not AttemptState.RELEASED
        if state is not None and state.outcome is None and unreleased:
            message = (f"job {job}: supervisor stopped by signal before the release: the job is held and has not "
                       f"started; start it with: {PROG} supervise {job}; or drop it with: {PROG} cancel {job}")
        else:
            message = (f"job {job}: supervisor stopped by signal; everything received is committed and the job "
                       f"continues Unattended; reattach with: {PROG} supervise {job}")
        print(f"{PROG}: {message}", file=sys.stderr)
        return _Exit(_signal_code(drain), error="interrupted", message=message, by_signal=True)
    if end.ending is Ending.GAVE_UP:
        message = (f"job {job}: the supervisor gave up ({end.detail}); the job is Unattended; "
                   f"reattach with: {PROG} supervise {job}")
        print(f"{PROG}: {message}", file=sys.stderr)
        return _Exit(ExitCode.GAVE_UP, error="gave-up", message=message)
    if end.ending is Ending.OUTSTANDING:
        outcome = f" (outcome: {state.outcome.kind})" if state and state.outcome else ""
        print(f"{PROG}: job {job}: work outstanding after supervise.wait{outcome}:", file=sys.stderr)
        for left in end.left:
            print(f"  {left.what}", file=sys.stderr)
        print(f"  carry it on with: {PROG} supervise {job}", file=sys.stderr)
        return _Exit(ExitCode.OUTSTANDING, error="outstanding",
                     message=f"job {job}: work outstanding after supervise.wait{outcome}; carry it on with: "
                             f"{PROG} supervise {job}")
    assert state is not None and state.outcome is not None
    if state.outcome.kind is OutcomeKind.REFUSED:
        message = f"job {job}: refused: {state.outcome.detail}"
        print(f"{PROG}: {message}", file=sys.stderr)
        return _Exit(for_outcome(state.outcome), error="refused", message=message)
    own = done.result.as_job if job_exit and done.result is not None else None
    if own is not None:
        return _Exit(own, ExitFrom.JOB)
    return _Exit(for_outcome(state.outcome))


def _gated_ending(job: str, end: SupervisionEnd, drain: Interrupts) -> _Exit | None:
    """How a job that waits for others (submit --after) ended before it was created: blocked (exit 1), or
    stopped by a signal while it waited; None for any other ending."""
    state = end.state
    if end.ending is Ending.BLOCKED:
        message = (f"job {job}: {end.detail}: nothing was created, and nothing will be while it stays so; "
                   f"run what blocked it again (dunscaith resubmit NAME --failed) then: {PROG} supervise {job}; "
                   f"or drop it: {PROG} cancel {job}")
        print(f"{PROG}: {message}", file=sys.stderr)
        return _Exit(ExitCode.NOT_SUCCESS, error="blocked", message=message)
    if end.ending is Ending.DRAINED and state is not None and state.spec.waits and not state.attempts:
        message = (f"job {job}: supervisor stopped by signal while it waited ({end.detail}); nothing was sent; "
                   f"carry on with: {PROG} supervise {job}")
        print(f"{PROG}: {message}", file=sys.stderr)
        return _Exit(_signal_code(drain), error="interrupted", message=message, by_signal=True)
    return None


def _signal_code(drain: Interrupts) -> int:
    """The exit code of the signal that stopped the supervisor (3 if it is not one Python knows)."""
    name = drain.pending()
    known = name is not None and name in signal.Signals.__members__
    return for_signal(signal.Signals[name].value) if known and name is not None else ExitCode.INTERNAL


class DropWhenClosed:
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
