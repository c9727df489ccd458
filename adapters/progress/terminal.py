"""The supervisor's live view (a ``JobProgress``): rich lines at a terminal, plain lines when piped.

rich is imported only when stdout is a terminal, so piped and scripted use (and ``status``) never
pays for it.
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import IO, TYPE_CHECKING

from domain.model.jobs import events as ev
from domain.model.jobs.state import JobState, label

if TYPE_CHECKING:
    from rich.console import Console
    from rich.status import Status


def describe(event: ev.Event) -> str:
    match event:
        case ev.JobRecorded(name=name, cluster=cluster):
            return f"recorded job {name} for cluster {cluster}"
        case ev.Submitting(attempt=n):
            return f"attempt {n}: submitting (created held)"
        case ev.Created(attempt=n, object_id=oid):
            return f"attempt {n}: created {oid}, held"
        case ev.Refused(attempt=n, detail=detail):
            return f"attempt {n}: refused: {detail}"
        case ev.Unknown(attempt=n, detail=detail):
            return f"attempt {n}: no reply ({detail}); recorded unknown, never resent"
        case ev.Found(attempt=n, object_id=oid):
            return f"attempt {n}: found {oid} by its nonce"
        case ev.Confirmed(attempt=n, object_id=oid):
            return f"attempt {n}: confirmed {oid} is this attempt's object"
        case ev.Released(attempt=n, object_id=oid):
            return f"attempt {n}: released {oid}"
        case ev.Observed(attempt=n, object_id=oid, state=state, exit_code=code, signal=sig, reason=why):
            extra = "".join([f", exit code {code}" if code is not None else "",
                             f", signal {sig}" if sig is not None else "", f", {why}" if why else ""])
            return f"attempt {n}: {oid} is {state}{extra}"
        case ev.Absent(attempt=n):
            return f"attempt {n}: its object is not listed (not an ending yet)"
        case ev.Cancelling(attempt=n, object_id=oid):
            return f"attempt {n}: stopping {oid}"
        case ev.MovedToResidual(attempt=n, reason=reason):
            return f"attempt {n}: moved to the residual list ({reason}); sweeps stop its object if it never started"
        case ev.Requested(action=action, request=rid):
            return f"request {rid}: {action}"
        case ev.Answered(request=rid, result=result, detail=detail):
            return f"request {rid}: {result}: {detail}"
        case ev.HeldByUser(attempt=n, object_id=oid):
            return f"attempt {n}: {oid} held, as asked"
        case ev.ActionFailed(action=action, detail=detail):
            return f"{action} not carried out: {detail}"
        case ev.Escalated(reason=reason, detail=detail):
            return f"ESCALATION ({reason}): {detail}"
        case ev.OutcomeReached(result=result, detail=detail):
            return f"outcome: {result} ({detail})"
        case ev.Settled():
            return "settled: nothing outstanding"
    return event.KIND


class TerminalProgress:
    """Lines for each committed step; at a terminal also a status line that says where the job is."""

    def __init__(self, job: str, stream: IO[str] | None = None) -> None:
        self._job = job
        self._stream = stream or sys.stdout
        self._console: Console | None = None
        self._status: Status | None = None
        if self._stream.isatty():
            from rich.console import Console

            self._console = Console(file=self._stream, highlight=False)

    def __enter__(self) -> TerminalProgress:
        if self._console is not None:
            # one refresh a second: a supervisor lives for hours on a login node that counts its CPU
            self._status = self._console.status(self._status_text("starting"), refresh_per_second=1.0)
            self._status.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _status_text(self, word: str) -> str:
        return f"[bold]{self._job}[/bold]: {word}  [dim](a signal stops the supervisor, never the job)[/dim]"

    def line(self, text: str, *, style: str = "") -> None:
        if self._console is not None:
            self._console.print(f"[dim]{self._job}[/dim] {text}", style=style or None, markup=True)
        else:
            print(f"{self._job}: {text}", file=self._stream, flush=True)

    def committed(self, state: JobState, event: ev.Event) -> None:
        if self._status is not None:
            self._status.update(self._status_text(label(state)))
        style = ""
        if isinstance(event, ev.Escalated):
            style = "bold red"
            print(f"dunscaith: job {self._job}: {describe(event)}", file=sys.stderr, flush=True)
        elif isinstance(event, ev.OutcomeReached):
            style = "bold green" if event.result == "succeeded" else "bold red"
        self.line(_escape(describe(event)) if self._console else describe(event), style=style)

    def supervised(self, state: JobState, at: datetime) -> None:
        pass


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
