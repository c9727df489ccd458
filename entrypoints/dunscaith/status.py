"""``dunscaith status / list``: what the records say, and whether a supervisor watches each job."""

from __future__ import annotations

import json
import shutil
import sys
from typing import Any

import typer

from domain.model.jobs.errors import JobsError
from domain.model.jobs.ids import JobId
from domain.model.jobs.summary import SummaryQuery
from entrypoints.cli_support import BadInput
from entrypoints.dunscaith import edge, render
from entrypoints.dunscaith.edge import PROG

DEFAULT_LINES = 54  # when the output is no terminal: 50 jobs


def status(
    ctx: typer.Context,
    job: str | None = typer.Argument(None, metavar="[JOB]"),
    as_json: bool = typer.Option(False, "--json", help="one JSON object (an array without JOB)"),
) -> int:
    """What the record says about a job (every job without JOB), and whether a supervisor watches it."""
    if job is None:
        return list_jobs(ctx, as_json, False)
    edge.owned_elsewhere(ctx, job, ["status", job, *(["--json"] if as_json else [])])
    edge.open_store(ctx)
    with edge.store_errors(ctx, job):
        try:
            view = edge.use_cases(ctx).status().one(JobId(job), live=True)
        except JobsError as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}") from None
    edge.notice_unattended(ctx, skip=job)
    edge.sweep(ctx)
    if as_json:
        shown = render.view_json(view)
        if view.live is not None:  # an Unattended job: what its scheduler says now, beside the record
            shown["live"] = {"state": view.live.state, "detail": view.live.detail,
                             "asked_at": view.live.asked_at.isoformat() if view.live.asked_at else None}
        print(json.dumps(shown, indent=2))
        return 0
    print(render.view_line(view))
    if view.live is not None:
        print(f"  live: {view.live.state or 'unknown'} ({view.live.detail}; the record says {view.label})")
    for a in view.state.attempts:
        obj = f" {a.object_id} {a.object_state or ''}".rstrip() if a.object_id else ""
        print(f"  attempt {a.number}: {a.order}{obj}")
    for e in view.state.escalations:
        print(f"  escalation ({e.reason}): {e.detail}")
    for r in view.state.unanswered:
        print(f"  request {r.id} ({r.action}): not answered yet")
    for o in view.left if view.state.outcome is not None else ():
        print(f"  outstanding: {o.what}")
    if view.unattended:
        print(f"  Unattended: no supervisor holds it; reattach with: {PROG} supervise {job}")
    return 0


def list_jobs(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="a JSON array"),
              show_all: bool = typer.Option(False, "--all", help="pruned jobs too (marked pruned)"),
              limit: int | None = typer.Option(None, "--limit", min=0, help=(
                  "at most this many of this host's jobs, newest first (0: all; default: a screenful, "
                  "all with --json)"))) -> int:
    """This host's jobs, newest first, a screenful at a time (pruned ones only with --all)."""
    edge.open_store(ctx)
    listing = edge.use_cases(ctx).listing()
    query = SummaryQuery(include_pruned=show_all, limit=_limit(limit, as_json))
    shown = 0
    if as_json:
        out = _JsonArray()
        for job in listing.page(query):  # written as it is read: memory flat in the number of jobs
            out.item(render.listed_json(job))
            shown += 1
    else:
        for job in listing.page(query):
            print(render.listed_line(job))
            shown += 1
    if query.limit is not None and shown == query.limit and (more := listing.count(query) - shown) > 0:
        edge.say(f"{more} older job{'s' if more != 1 else ''} not shown (newest first): --limit N, or --limit 0 "
                 "for all")
    try:
        elsewhere = edge.elsewhere(ctx)
    except Exception as exc:  # pointers are display only
        edge.say(f"pointers not read: {exc}")
        elsewhere = []
    expired = edge.expire(ctx)  # list drops expired entries (reported) and asks no scheduler
    residual = [(e, True) for e in expired.expired] + [(e, False) for e in expired.kept] if expired else []
    if as_json:
        for p, u in elsewhere:
            out.item({"job": p.job, "host": p.host, "state": p.state, "from_pointer": True, "unattended": u,
                      "supervised_at": p.supervised_at.isoformat() if p.supervised_at else None})
        for e, gone in residual:
            out.item(render.entry_json(e, gone))
        out.close()
        return 0
    for p, u in elsewhere:
        print(f"{p.job}  {p.state}  on host {p.host} (from its pointer{'; looks Unattended' if u else ''})")
    for e, gone in residual:
        print(render.entry_line(e, gone))
    edge.notice_unattended(ctx)
    return 0


def _limit(given: int | None, as_json: bool) -> int | None:
    if given is not None:
        return given or None
    if as_json:
        return None
    # a screenful: the terminal's height less a few lines for notices (a pipe gets the fallback's 24)
    return max(10, shutil.get_terminal_size((80, DEFAULT_LINES)).lines - 4)


class _JsonArray:
    """One JSON array on stdout, an element at a time."""

    def __init__(self) -> None:
        self._first = True

    def item(self, value: dict[str, Any]) -> None:
        text = json.dumps(value, indent=2).replace("\n", "\n  ")
        sys.stdout.write(("[\n  " if self._first else ",\n  ") + text)
        self._first = False

    def close(self) -> None:
        sys.stdout.write("[]\n" if self._first else "\n]\n")


def register(app: typer.Typer) -> None:
    app.command("status")(status)
    app.command("list")(list_jobs)
