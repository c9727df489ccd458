"""``dunscaith doctor``: what is wrong with this host's records, one line each; nothing is changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from dunscaith.domain.model.shown import reason
from dunscaith.entrypoints.dunscaith import edge

if TYPE_CHECKING:
    from dunscaith.domain.services.jobs.doctor import Doctor


@edge.injected
def doctor(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="a JSON array of findings"),
           rebuild: bool = typer.Option(False, "--rebuild-summaries", help=(
               "first fold every record again into the summary list shows (the records are not changed)")),
           reindex: bool = typer.Option(False, "--rebuild-index", help=(
               "first index this host's pointers again: the index of pointers not settled that status and "
               "list read (the pointers are not changed)")), *,
           doctor: Callable[[], Doctor] = edge.GIVEN,
           ) -> int:
    """Check the store (that it opens, its integrity), every record, every pointer and residual entry."""
    if rebuild:
        with edge.store_errors():
            done = doctor().rebuild_summaries()
        edge.say(f"{done} summar{'y' if done == 1 else 'ies'} folded again from the records")
    if reindex:
        try:
            changed = doctor().rebuild_index()
        except Exception as exc:  # the pointers' folder: one line, the check goes on
            edge.say(f"the index of pointers was not rebuilt: {reason(exc)}")
        else:
            edge.say(f"{changed} entr{'y' if changed == 1 else 'ies'} of the index of pointers added or removed")
    report = doctor()()
    if as_json:
        print(json.dumps([{"subject": f.subject, "problem": f.problem, "detail": f.detail}
                          for f in report.findings], indent=2))
    else:
        for finding in report.findings:
            if finding.problem is None:
                print(f"ok       {finding.subject}: {finding.detail}")
            else:
                print(f"PROBLEM  {finding.subject}: {finding.problem}")
        if report.problems:
            print(f"{len(report.problems)} problem(s); nothing was changed. How to recover: docs/record-backing.md")
    return 1 if report.problems else 0


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)  # its exit codes: help_text.EPILOGS
