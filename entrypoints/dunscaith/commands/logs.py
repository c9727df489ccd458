"""``dunscaith logs``: a job's stdout or stderr, from the path its scheduler gave (local or Slurm)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.shown import escaped
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge

if TYPE_CHECKING:
    from dunscaith.domain.services.jobs.job_output import JobOutputs
    from dunscaith.domain.services.jobs.listing import JobListing


@edge.injected
def logs(ctx: typer.Context, job: str | None = typer.Argument(None, metavar="JOB", help=(
             "the job (default: the newest job recorded here, the first that list shows)")),
         stderr: bool = typer.Option(False, "--stderr", help="the job's stderr instead of its stdout"),
         follow: bool = typer.Option(False, "--follow", "-f", help="keep showing what is added until the job ends"),
         attempt: int | None = typer.Option(None, "--attempt", metavar="N", min=1,
                                            help="that attempt's output (default: the last one)"),
         tail: int | None = typer.Option(None, "--tail", "-n", metavar="N", min=0,
                                         help="only the last N lines (with --follow: from them on, as tail -n N -f)"),
         both: bool = typer.Option(False, "--all", help="stdout, then stderr, each under a heading naming it and "
                                                        "its path (a finished job's; not with --follow or --stderr)"),
         *, job_outputs: Callable[[], JobOutputs] = edge.GIVEN, listing: Callable[[], JobListing] = edge.GIVEN,
         at: edge.At = edge.AT,
         ) -> int:
    """Print a job's stdout (or --stderr), from the path its scheduler gave (local or Slurm).

    Without JOB, the newest job's (the first that list shows), its name said on stderr."""
    if both and (follow or stderr):
        raise BadInput(f"--all prints stdout then stderr, once: it does not go with "
                       f"{'--follow' if follow else '--stderr'}")
    edge.open_store(at)
    if job is None:
        job = _newest(listing)
    edge.owned_elsewhere(at, job, ["logs", job])
    state = edge.read_state(at, JobId(job))
    edge.notice_unattended(at, skip=job)
    if not state.attempts:
        raise BadInput(f"job {job} has no attempt yet: nothing has run")
    if attempt is not None and attempt > len(state.attempts):
        raise BadInput(f"job {job} has {len(state.attempts)} attempt(s); there is no attempt {attempt}")
    chosen = state.attempt(attempt) if attempt is not None else state.attempts[-1]
    outputs = job_outputs()
    out, err = outputs.paths(state.spec.cluster, chosen)
    if both:
        return _both(job, chosen.number, outputs, out, err, tail)
    path = err if stderr else out
    which = "stderr" if stderr else "stdout"
    if path is None:
        raise BadInput(f"job {job}: attempt {chosen.number} has no {which} path recorded (not released yet, or "
                       "its scheduler no longer knows it)")
    if not follow:
        try:
            _print(outputs, path, tail)
        except OSError as exc:
            raise BadInput(f"job {job}: {which} {path}: {exc.strerror or exc}") from None
        return 0

    def ended() -> bool:
        current = edge.read_state(at, JobId(job))
        now_attempt = current.attempt(chosen.number)
        return current.outcome is not None or now_attempt.ended or len(current.attempts) > chosen.number

    start = 0
    if tail is not None:
        try:  # the last N lines now, then what is added from where they end (not there yet: from its start)
            last, start = outputs.tail(path, tail)
            sys.stdout.buffer.write(last)
            sys.stdout.flush()
        except OSError:
            start = 0
    outputs.follow(path, _write, ended, start)
    return 0


def _newest(listing: Callable[[], JobListing]) -> str:
    """The newest job recorded in this store (pruned ones aside), said on stderr: stdout is its output."""
    from dunscaith.domain.model.jobs.summary import SummaryQuery
    from dunscaith.domain.services.jobs.listing import Unreadable

    with edge.store_errors():
        newest = next(iter(listing().views(SummaryQuery(limit=1))), None)
    if newest is None:
        raise BadInput("no job is recorded here yet: give JOB (dunscaith list shows the jobs)")
    name = str(newest.job if isinstance(newest, Unreadable) else newest.state.name)
    edge.say(f"the newest job: {name}")
    return name


def _print(outputs: JobOutputs, path: str, tail: int | None) -> None:
    """The file (its last ``tail`` lines) onto stdout as it is, bytes and all; OSError when it does not read."""
    if tail is not None:
        sys.stdout.buffer.write(outputs.tail(path, tail)[0])
    else:
        for piece in outputs.chunks(path):
            sys.stdout.buffer.write(piece)
    sys.stdout.flush()


def _both(job: str, number: int, outputs: JobOutputs, out: str | None, err: str | None, tail: int | None) -> int:
    """``logs --all``: stdout then stderr, each under its heading (one, when both go to one file); 2 when
    a stream has no path or does not read (said on stderr, the other printed all the same)."""
    streams = [("stdout and stderr", out)] if out is not None and out == err else [("stdout", out), ("stderr", err)]
    failed = False
    for index, (which, path) in enumerate(streams):
        sys.stdout.write(("\n" if index else "") + escaped(f"==> {which}: {path or '(no path recorded)'} <==") + "\n")
        sys.stdout.flush()
        if path is None:
            edge.say(f"job {job}: attempt {number} has no {which} path recorded (not released yet, or its "
                     "scheduler no longer knows it)")
            failed = True
            continue
        try:
            _print(outputs, path, tail)
        except OSError as exc:
            edge.say(f"job {job}: {which} {escaped(path)}: {exc.strerror or exc}")
            failed = True
    return 2 if failed else 0


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.command("logs")(logs)
