"""The supervisor's live view (a ``JobProgress``): at a terminal one status line kept at the bottom (the
job, its state, the time since it was recorded, the last change) with each change printed above it;
elsewhere (a pipe, a file, nohup, ``NO_COLOR``) timestamped plain lines and no escape code at all.

With ``follow`` the job's stdout and stderr are copied into the terminal as they grow, as ``srun``
shows them, above the status line. rich is imported only for a terminal.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

from dunscaith.adapters.progress.output_files import Follower
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.state import JobState, label

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live

# Plain words for the live view; the exact terms stay in the record, in --json and in docs/first-job.md.
_SAYS_REQUEST = {"confirmed": "accepted", "refused": "refused"}


def _request_action(state: JobState | None, request_id: str) -> str:
    found = state.request(request_id) if state is not None else None
    return str(found.action) if found is not None else "a request"


def describe(event: ev.Event, state: JobState | None = None) -> str:
    """One event in plain words: what happened to an attempt, or what a person asked and how the job ended."""
    if isinstance(event, ev.JobRecorded):
        return f"recorded job {event.name} for cluster {event.cluster}"
    return _attempt_words(event) or _request_or_end_words(event, state) or event.KIND


def _attempt_words(event: ev.Event) -> str | None:
    """An attempt's object: made, found, released, seen, stopped; None for any other event."""
    match event:
        case ev.Submitting(attempt=n):
            return f"attempt {n}: submitting (the scheduler keeps it on hold until it is confirmed)"
        case ev.Created(attempt=n, object_id=oid):
            return f"attempt {n}: submitted as {oid}, on hold"
        case ev.Refused(attempt=n, detail=detail):
            return f"attempt {n}: the scheduler refused it: {detail}"
        case ev.Unknown(attempt=n, detail=detail):
            return f"attempt {n}: no reply from the scheduler ({detail}); never sent again, looked for by name"
        case ev.Found(attempt=n, object_id=oid):
            return f"attempt {n}: found it after all: {oid}"
        case ev.Confirmed(attempt=n, object_id=oid):
            return f"attempt {n}: {oid} checked: it is this job's"
        case ev.Released(attempt=n, object_id=oid):
            return f"attempt {n}: {oid} released to run"
        case ev.Observed(attempt=n, object_id=oid, state=seen, exit_code=code, signal=sig, reason=why):
            extra = "".join([f", exit code {code}" if code is not None else "",
                             f", signal {sig}" if sig is not None else "", f", {why}" if why else ""])
            return f"attempt {n}: {oid} is {seen.replace('_', ' ')}{extra}"
        case ev.Absent(attempt=n):
            return f"attempt {n}: the scheduler does not list it right now (not taken as an end)"
        case ev.Cancelling(attempt=n, object_id=oid):
            return f"attempt {n}: stopping {oid}"
        case ev.MovedToResidual(attempt=n, reason=reason):
            return f"attempt {n}: moved to the residual list ({reason}); sweeps stop its object if it shows, unstarted"
    return None


def _request_or_end_words(event: ev.Event, state: JobState | None) -> str | None:
    """A request from another terminal and what came of it, an escalation, the outcome; None for any other."""
    match event:
        case ev.Requested(action=action):
            return f"{action} requested from another terminal"
        case ev.Answered(request=rid, result=result, detail=detail):
            word = _SAYS_REQUEST.get(result, result)
            return f"{_request_action(state, rid)} requested from another terminal: {word}: {detail}"
        case ev.HeldByUser(attempt=n, object_id=oid):
            return f"hold carried out: {oid} is held until `dunscaith release`"
        case ev.Requeueing(attempt=n, object_id=oid):
            return f"attempt {n}: asking the scheduler to requeue {oid}"
        case ev.Requeued(attempt=n, object_id=oid):
            return f"requeue carried out: {oid} goes back to the queue"
        case ev.ActionFailed(action=action, detail=detail):
            return f"{action} not carried out: {detail}"
        case ev.Escalated(reason=reason, detail=detail):
            return f"ESCALATION ({reason}), a person must decide: {detail}"
        case ev.Delivered(index=i):
            return f"escalation {i + 1} passed to the escalation command"
        case ev.OutcomeReached(result=result, detail=detail):
            return f"outcome: {result} ({detail})"
        case ev.Settled():
            return "done: nothing left to do"
        case ev.Pruned():
            return "pruned"
        case ev.NoticeDelivered():
            return "notice passed to notify.command"
    return None


def plain_output(stream: IO[str]) -> bool:
    """No escape codes: not a terminal, NO_COLOR set (to anything), or TERM=dumb."""
    return not stream.isatty() or "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb"


def console_for(stream: IO[str]) -> Console | None:
    """A rich console writing to ``stream`` when it shows escape codes (rich imported only then), else None."""
    if plain_output(stream):
        return None
    from rich.console import Console

    return Console(file=stream, highlight=False, soft_wrap=True)


def start_live(console: Console | None, shown: Any, **options: Any) -> Live | None:
    """A live view of ``shown`` at the bottom of ``console``, started (None without a console); it never
    takes over stdout or stderr."""
    if console is None:
        return None
    from rich.live import Live

    live = Live(shown, console=console, redirect_stdout=False, redirect_stderr=False, **options)
    live.start()
    return live


def elapsed(seconds: float) -> str:
    """``1:02:03``, ``2:05``: a time elapsed as a live view shows it."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class _StatusLine:
    """What the bottom line says; rendered anew each refresh so the elapsed time moves."""

    def __init__(self, view: TerminalProgress) -> None:
        self._view = view

    def __rich__(self) -> Any:
        from rich.text import Text

        v = self._view
        since = v.since or datetime.now(UTC)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(v.job, style="bold")
        text.append(f"  {v.word}  {elapsed((datetime.now(UTC) - since).total_seconds())}")
        if v.last:
            text.append(f"  {v.last}", style="dim")
        return text


class TerminalProgress:
    def __init__(self, job: str, stream: IO[str] | None = None, *, follow: bool = False) -> None:
        self.job = job
        self._stream = stream or sys.stdout
        self._console = console_for(self._stream)
        self._live: Live | None = None
        self._follow = Follower() if follow else None
        self.word = "starting"
        self.last = ""
        self.since: datetime | None = None

    def __enter__(self) -> TerminalProgress:
        # one refresh a second: a supervisor lives for hours on a login node that counts its CPU
        self._live = start_live(self._console, _StatusLine(self), refresh_per_second=1.0, transient=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._follow is not None:
            self._follow.stop()
        if self._live is not None:
            self._live.stop()
            self._live = None

    def line(self, text: str, *, style: str = "", at: datetime | None = None) -> None:
        """One line above the status line (a terminal) or one timestamped line (elsewhere); never wrapped."""
        try:
            if self._console is not None:
                from rich.text import Text

                stamp = (at or datetime.now(UTC)).astimezone().strftime("%H:%M:%S")
                self._console.print(Text(f"{stamp} ", style="dim") + Text(text, style=style or ""),
                                    soft_wrap=True)
            else:
                stamp = (at or datetime.now(UTC)).astimezone().isoformat(timespec="seconds")
                print(f"{stamp} {self.job}: {text}", file=self._stream, flush=True)
        except (BrokenPipeError, OSError, ValueError):  # a closed reader: output dropped, supervision goes on
            pass

    def _job_output(self, text: str, to: IO[str]) -> None:
        if self._console is not None:
            from rich.text import Text

            self._console.print(Text(text.rstrip("\n")), soft_wrap=True)
        else:
            to.write(text)
            to.flush()

    def show(self, state: JobState) -> None:
        """Where the job is before the first change (a reattached view says its state, not "starting")."""
        self.since = state.recorded_at
        self.word = label(state)
        self._follow_current(state)
        if self._live is not None:
            self._live.refresh()

    def _follow_current(self, state: JobState) -> None:
        current = state.current
        if self._follow is None or current is None:
            return
        if current.stdout:
            self._follow.add(current.stdout, lambda text: self._job_output(text, self._stream))
        if current.stderr and current.stderr != current.stdout:
            self._follow.add(current.stderr, lambda text: self._job_output(text, sys.stderr))

    def committed(self, state: JobState, event: ev.Event) -> None:
        self.since = self.since or state.recorded_at
        self.word = label(state)
        text = describe(event, state)
        self.last = text
        style = ""
        if isinstance(event, ev.Escalated):
            style = "bold red"
            try:
                print(f"dunscaith: job {self.job}: {text}", file=sys.stderr, flush=True)
            except (BrokenPipeError, OSError, ValueError):
                pass
        elif isinstance(event, ev.OutcomeReached):
            style = "bold green" if event.result == "succeeded" else "bold red"
            if self._follow is not None:  # the job's output first, the outcome last, however soon it ended
                self._follow_current(state)
                self._follow.drain()
        self.line(text, style=style, at=state.updated_at)
        if isinstance(event, ev.Released):  # each path on a line of its own: one to copy, never wrapped
            if event.stdout:
                self.line(f"stdout: {event.stdout}", at=state.updated_at)
            if event.stderr and event.stderr != event.stdout:
                self.line(f"stderr: {event.stderr}", at=state.updated_at)
        if self._live is not None:
            self._live.refresh()
        if isinstance(event, ev.Released):
            self._follow_current(state)

    def supervised(self, state: JobState, at: datetime) -> None:
        pass

    def note(self, text: str) -> None:
        self.line(text, style="yellow")
