"""``dunscaith status / list``: what the records say, and whether a supervisor watches each job.

``status`` and ``list`` are declared here (their arguments and help) and run by ``status_list.py``'s
bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge, status_list, table

if TYPE_CHECKING:  # types only: status --watch imports its module (commands/watch.py) when it runs
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


def register(app: typer.Typer) -> None:
    app.command("status")(status)
    app.command("list")(list_jobs)
