"""``dunscaith check CLUSTER``: can this cluster be used, before a job is submitted to it? One line a check.

The use case is ``domain.services.jobs.check.CheckCluster``; this command parses, calls it and renders.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from dunscaith.entrypoints.dunscaith import edge

if TYPE_CHECKING:
    from dunscaith.domain.services.jobs.check import CheckCluster

EPILOG = ("Exit codes: 0 every check passed; 1 a check failed (its line says why); 2 bad input (an unknown "
          "cluster, the configuration). See docs/exit-codes.md.")
_SHOWN = {"ok": "ok", "failed": "FAILED", "not-kept": "ok", "not-tried": "-"}


@edge.injected
def check(ctx: typer.Context, cluster: str = typer.Argument(..., metavar="CLUSTER"),
          as_json: bool = typer.Option(False, "--json", help="one JSON object"), *,
          check: Callable[..., CheckCluster] = edge.GIVEN) -> int:
    """Check a cluster before submitting to it: its controller answers, it keeps accounting, and it makes and
    cancels a held object of a test name (never started); one line each, in a few seconds."""
    edge.settings(ctx).cluster(cluster)  # an unknown cluster: one line, exit 2
    report = check(cluster=cluster)()
    failed = [line for line in report.lines if not line.result.passed]
    summary = (f"cluster {cluster} ({report.adapter}): every check passed" if report.passed else
               f"cluster {cluster} ({report.adapter}): {failed[0].check} failed: {failed[0].detail}")
    if as_json:
        document: dict[str, object] = {
            "cluster": cluster, "adapter": report.adapter, "passed": report.passed,
            "checks": [{"check": line.check, "result": str(line.result), "detail": line.detail}
                       for line in report.lines]}
        if not report.passed:
            document["error"] = {"code": "check-failed", "message": summary, "exit_code": report.exit_code}
        print(json.dumps(document))
    else:
        width = max(len(line.check) for line in report.lines)
        for line in report.lines:
            print(f"{_SHOWN[str(line.result)]:<7} {line.check:<{width}}  {line.detail}")
        if not report.passed:
            edge.say(summary)
    return report.exit_code


def register(app: typer.Typer) -> None:
    app.command("check", epilog=EPILOG)(check)
