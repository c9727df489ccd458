"""``dunscaith status / list``: what the records say, and whether a supervisor watches each job."""

from __future__ import annotations

import json
from typing import Any

import typer

from domain.model.jobs.errors import JobsError
from domain.model.jobs.ids import JobId
from domain.services.jobs.status import JobView
from entrypoints.cli_support import BadInput
from entrypoints.dunscaith import edge, render
from entrypoints.dunscaith.edge import PROG
from ports.job_store import RecordDamaged


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
        except (JobsError, RecordDamaged) as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}") from None
    for name, problem in edge.damaged_pointers(ctx):
        if name == job:  # display only: the record here is what counts, and it read
            edge.say(f"{problem}; it is display only: remove it, and the job's next change writes a new one")
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
              show_all: bool = typer.Option(False, "--all", help="pruned jobs too (marked pruned)")) -> int:
    """Every job in this host's records, oldest first (pruned ones only with --all)."""
    edge.open_store(ctx)
    with edge.store_errors():
        views = [v for v in edge.use_cases(ctx).status().all()
                 if show_all or not isinstance(v, JobView) or v.state.pruned_at is None]
    damaged = edge.damaged_pointers(ctx)
    try:
        elsewhere = edge.elsewhere(ctx)
    except Exception as exc:  # pointers are display only
        edge.say(f"pointers not read: {exc}")
        elsewhere = []
    expired = edge.expire(ctx)  # list drops expired entries (reported) and asks no scheduler
    residual = [(e, True) for e in expired.expired] + [(e, False) for e in expired.kept] if expired else []
    if as_json:
        listed: list[dict[str, Any]] = [render.view_json(v) if isinstance(v, JobView)
                                        else {"job": v[0], "problem": v[1]} for v in views]
        listed += [{"job": p.job, "host": p.host, "state": p.state, "from_pointer": True, "unattended": u,
                    "supervised_at": p.supervised_at.isoformat() if p.supervised_at else None}
                   for p, u in elsewhere]
        listed += [{"job": job, "problem": problem, "from_pointer": True} for job, problem in damaged]
        listed += [{"job": job, "residual": key, "problem": problem}
                   for job, key, problem in (expired.damaged if expired else [])]
        listed += [render.entry_json(e, gone) for e, gone in residual]
        print(json.dumps(listed, indent=2))
        return 0
    for v in views:
        print(render.view_line(v) if isinstance(v, JobView) else f"{v[0]}  damaged: {v[1]}")
    for p, u in elsewhere:
        print(f"{p.job}  {p.state}  on host {p.host} (from its pointer{'; looks Unattended' if u else ''})")
    for job, problem in damaged:
        print(f"{job}  damaged pointer: {problem}")
    for job, key, problem in expired.damaged if expired else []:
        print(f"{job}  damaged residual entry {key}: {problem}")
    for e, gone in residual:
        print(render.entry_line(e, gone))
    edge.notice_unattended(ctx)
    return 0


def register(app: typer.Typer) -> None:
    app.command("status")(status)
    app.command("list")(list_jobs)
