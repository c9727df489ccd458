"""``dunscaith stop --emergency JOB``: the exception to every rule of the record (seed 000).

The use case is ``domain.services.jobs.emergency_stop.EmergencyStop``; this command parses, calls it
and renders its report.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from dunscaith.domain.model.jobs.spec import BadSpec
from dunscaith.domain.services.jobs.submit import check_name
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge

if TYPE_CHECKING:
    from dunscaith.domain.services.jobs.emergency_stop import EmergencyStop

PROG = "dunscaith"


@edge.injected
def stop(
    ctx: typer.Context,
    job: str = typer.Argument(..., metavar="JOB"),
    emergency: bool = typer.Option(False, "--emergency", help="stop every object of JOB's name, running ones too"),
    cluster: str | None = typer.Option(None, "--cluster", help="default: the job's pointer's, else 'local'"),
    as_json: bool = typer.Option(False, "--json", help="one JSON object"),
    *,
    emergency_stop: Callable[[], EmergencyStop] = edge.GIVEN,
) -> int:
    """Stop every scheduler object that carries JOB's name, with no record and no SSH (needs --emergency)."""
    if not emergency:
        raise BadInput("stop needs --emergency: it stops every object of the job's name, running ones too, "
                       f"without its record; to end a job under its record use `{PROG} cancel JOB`")
    try:
        name = check_name(job)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None
    stop_all = emergency_stop()
    where = cluster if cluster is not None else stop_all.cluster_of(name)
    edge.settings(ctx).cluster(where)  # an unknown cluster: one line, exit 2
    done = stop_all(name, where)
    stopped, problem = list(done.stopped), done.problem or ""
    owner = stop_all.bound_elsewhere(name) if cluster is None else None
    if owner is not None and not stopped and not problem:
        # the local scheduler's processes can only be seen and signalled on their own host
        problem = (f"{name} runs under the local scheduler of {owner}, which this host cannot reach: "
                   f"type `{PROG} stop --emergency {name}` on {owner}")
    if as_json:
        print(json.dumps({"job": name, "cluster": where, "stopped": stopped, "problem": problem or None}))
    elif problem:
        print(f"{PROG}: emergency stop of {name} on cluster {where}: {problem}", file=sys.stderr)
    elif stopped:
        print(f"stopped {len(stopped)} object(s) of {name} on cluster {where}: {', '.join(stopped)}")
    else:
        print(f"nothing of {name} to stop on cluster {where}")
    return 1 if problem else 0


def register(app: typer.Typer) -> None:
    app.command("stop")(stop)
