"""``dunscaith events JOB``: the job's record as a timeline, every decision and scheduler answer in order."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.timeline import json_lines, lines
from dunscaith.entrypoints.dunscaith import edge

if TYPE_CHECKING:
    from dunscaith.domain.services.jobs.timeline import JobEvents


@edge.injected
def events(
    ctx: typer.Context,
    job: str = typer.Argument(..., metavar="JOB"),
    as_json: bool = typer.Option(False, "--json", help="JSON lines: one object per event (docs/json.md)"),
    *,
    job_events: Callable[[], JobEvents] = edge.GIVEN,
    at: edge.At = edge.AT,
) -> int:
    """The job's record as a timeline: each decision and scheduler answer, when, and who acted, by attempt."""
    edge.owned_elsewhere(at, job, ["events", job, *(["--json"] if as_json else [])], follow=True)
    edge.open_store(at)
    with edge.store_errors(at, job):
        shown = job_events().of(JobId(job))
    out = json_lines(shown) if as_json else lines(shown)
    sys.stdout.write("".join(f"{text}\n" for text in out))
    sys.stdout.flush()
    edge.notice_unattended(at, skip=job)
    return 0


def register(app: typer.Typer) -> None:
    app.command("events")(events)
