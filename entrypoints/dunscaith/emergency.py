"""``dunscaith stop --emergency JOB``: the exception to every rule of the record (seed 000).

It reads no record, takes no lock and uses no SSH: it opens the cluster with no store and stops
every object that carries the job's name, running ones too, so it works when the owning host is down
or its record root is gone. The pointer is read only to learn the job's cluster, and only if it reads.
"""

from __future__ import annotations

import json
import sys

import typer

from domain.model.jobs.ids import JobId
from entrypoints.cli_support import BadInput
from entrypoints.dunscaith import edge

PROG = "dunscaith"


def _cluster_of(ctx: typer.Context, job: JobId) -> str:
    try:
        return str(edge.adapters(ctx).pointers().read(job).cluster)
    except Exception:  # no pointer, a damaged one, an unreadable home: the default cluster
        return "local"


def stop(
    ctx: typer.Context,
    job: str = typer.Argument(..., metavar="JOB"),
    emergency: bool = typer.Option(False, "--emergency", help="stop every object of JOB's name, running ones too"),
    cluster: str | None = typer.Option(None, "--cluster", help="default: the job's pointer's, else 'local'"),
    as_json: bool = typer.Option(False, "--json", help="one JSON object"),
) -> int:
    """Stop every scheduler object that carries JOB's name, with no record and no SSH (needs --emergency)."""
    if not emergency:
        raise BadInput("stop needs --emergency: it stops every object of the job's name, running ones too, "
                       f"without its record; to end a job under its record use `{PROG} cancel JOB`")
    from domain.model.jobs.spec import BadSpec
    from domain.services.jobs.submit import check_name
    from ports.scheduler import SchedulerError

    try:
        name = check_name(job)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None
    where = cluster if cluster is not None else _cluster_of(ctx, name)
    edge.settings(ctx).cluster(where)  # an unknown cluster: one line, exit 2
    scheduler = edge.adapters(ctx).schedulers()(where)
    try:
        stopped = list(scheduler.emergency_stop(name))
        problem = ""
    except SchedulerError as exc:
        stopped, problem = [], str(exc)
    if as_json:
        print(json.dumps({"job": name, "cluster": where, "stopped": stopped, "problem": problem or None}))
    elif problem:
        print(f"{PROG}: emergency stop of {name} on cluster {where}: {problem}", file=sys.stderr)
    elif stopped:
        print(f"stopped {len(stopped)} object(s) of {name} on cluster {where}: {', '.join(stopped)}")
    else:
        print(f"nothing of {name} to stop on cluster {where}")
    return 1 if problem else 0
