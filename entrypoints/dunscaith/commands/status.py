"""``dunscaith status / list / logs``: what the records say, and whether a supervisor watches each job.

``status`` and ``list`` are declared here (their arguments and help) and run by ``status_list.py``'s
bodies.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.shown import escaped
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge, status_list, table

if TYPE_CHECKING:  # types only: status --watch imports its module (commands/watch.py) when it runs
    from dunscaith.domain.services.jobs.job_output import JobOutputs
    from dunscaith.domain.services.jobs.listing import JobListing
    from dunscaith.domain.services.jobs.status import JobStatus
    from dunscaith.domain.services.jobs.sweep_status import SweepStatus
    from dunscaith.domain.services.jobs.watch import WatchJob


@edge.injected
def status(
    ctx: typer.Context,
    job: str | None = typer.Argument(None, metavar="JOB", help=(
        "the job, or a sweep's or a pipeline's name (every job without it, as list)")),
    as_json: bool = typer.Option(False, "--json", help="one JSON object (docs/json.md)"),
    watch: bool = typer.Option(False, "--watch", help="follow the job to its end, as `dunscaith watch JOB`"),
    state: str | None = typer.Option(None, "--state", metavar="STATE", help=(
        "a sweep's elements in this state (JOB names a sweep: docs/sweeps.md)")),
    *,
    watch_job: Callable[[], WatchJob] = edge.GIVEN,
    status: Callable[[], JobStatus] = edge.GIVEN,
    sweep_status: Callable[[], SweepStatus] = edge.GIVEN,
    listing: Callable[[], JobListing] = edge.GIVEN,
    at: edge.At = edge.AT,
) -> int:
    """What the record says about a job (every job without JOB), and whether a supervisor watches it."""
    if watch:  # the live view, not a snapshot: commands/watch.py
        from dunscaith.entrypoints.dunscaith.commands.watch import watch_status

        if state is not None:
            raise BadInput("--watch follows one job: it does not go with --state")
        return watch_status(at, watch_job, job, as_json)
    return status_list.status(at, status_list.Reads(status, sweep_status, listing), job, as_json, state)


@edge.injected
def list_jobs(ctx: typer.Context,
              as_json: bool = typer.Option(False, "--json", help="one JSON object (docs/json.md)"),
              show_all: bool = typer.Option(False, "--all", help=(
                  "pruned jobs too (marked pruned), and every other host's job its pointer shows, settled "
                  "ones too (reads every pointer)")),
              wide: bool = typer.Option(False, "--wide", "-w", help=(
                  "more columns (adapter, submitted, outcome, attempts, object, stdout, stderr) and whole "
                  "lines, never cut to the terminal's width")),
              state: str | None = typer.Option(None, "--state", metavar="STATE",
                                               help="only jobs in this state (running, failed, held...)"),
              cluster: str | None = typer.Option(None, "--cluster", metavar="NAME", help="only jobs of this cluster"),
              since: str | None = typer.Option(None, "--since", metavar="WHEN",
                                               help="only jobs submitted since (12h, 2d, or a date)"),
              limit: int | None = typer.Option(None, "--limit", min=0, metavar="N", help=(
                  "at most N of this host's jobs, newest first (0: all; default: a screenful, all with "
                  "--json)")),
              columns: str | None = typer.Option(None, "--format", "-o", metavar="COLUMNS", help=(
                  f"the columns, in order, comma-separated (e.g. name,state,elapsed); the columns: "
                  f"{', '.join(table.COLUMNS)} (default: {','.join(table.DEFAULT)})")),
              noheader: bool = typer.Option(False, "--noheader", help="no header line (as squeue's)"),
              expand: bool = typer.Option(False, "--expand", help=(
                  "a sweep's elements and a pipeline's jobs as rows of their own (without it, a sweep is "
                  "one row: its name, `sweep of N` and its counts; a pipeline too, `pipeline of N`); --json "
                  "always lists every job")), *,
              listing: Callable[[], JobListing] = edge.GIVEN, at: edge.At = edge.AT) -> int:
    """This host's jobs as a table, newest first, a screenful at a time (pruned ones only with --all)."""
    return status_list.list_jobs(at, listing, as_json, show_all, wide, state, cluster, since, limit, columns, noheader,
                                 expand)


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
    app.command("status")(status)
    app.command("list")(list_jobs)
    app.command("logs")(logs)
