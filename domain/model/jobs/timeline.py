"""A job's record as a timeline (``dunscaith events``): each line of the record, in order, as one sentence
with its time and who acted, grouped by attempt. Pure: the record is given, and so is the time zone.

The record does not say who committed each line; its kind does. A ``request`` is a job command's (which
one is its action); ``job-recorded`` is ``submit``'s, on the host the record names; ``pruned`` is
``prune``'s; a scheduler answer (``created``, ``refused``, ``found``, ``confirmed``, ``observed``,
``absent``) is the scheduler's, as the lock holder recorded it; every other line is a decision of the lock
holder: the supervisor, or a job command carrying out its own request when no supervisor held the lock
(the record cannot tell those two apart, and says "supervisor" for both). Every line of a record in a
host's own store (SQLite) was committed on that host, so each line names it; in a store shared by login
nodes (PostgreSQL) any of them may have, and no line names a host.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from enum import StrEnum
from typing import Any

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.attempt_needs import NEED_NAMES
from dunscaith.domain.model.jobs.record import JobRecord
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.shown import escaped


class Actor(StrEnum):
    SUPERVISOR = "supervisor"  # the lock holder's decision (see the module's note)
    SCHEDULER = "scheduler"  # the scheduler's answer, as the lock holder recorded it
    COMMAND = "command"  # a job command: submit, a request (hold, cancel...), prune


_SCHEDULER_ANSWERS = (ev.Created, ev.Refused, ev.Found, ev.Confirmed, ev.Observed, ev.Absent)


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    seq: int
    at: datetime
    kind: str
    attempt: int | None  # the attempt it belongs to (None: the job's, before any attempt)
    actor: Actor
    command: str | None  # which command, for Actor.COMMAND
    text: str  # what happened, one sentence (not yet escaped: the renderer escapes)
    data: Mapping[str, Any] = field(default_factory=dict)  # the line's fields as the record keeps them
    readable: bool = True  # False: a line this build cannot decode (shown raw)


@dataclass(frozen=True, slots=True)
class Timeline:
    job: str
    cluster: str
    adapter: str
    host: str | None  # the host the job was submitted on, as the record says (None: it names none)
    location: str  # where the record is, as the store says
    bound: bool  # the store is that host's own: every line was committed there (False: a shared store)
    entries: tuple[TimelineEntry, ...]
    truncated_tail: bool = False  # the record's last line did not read whole (a crash mid-write)


def timeline(record: JobRecord, location: str = "", *, bound: bool = True) -> Timeline:
    """The record's lines as entries, in order; a line this build does not read is kept, marked.
    ``bound``: the store is one host's own (every line committed on the host the record names)."""
    entries: list[TimelineEntry] = []
    head: ev.JobRecorded | None = None
    actions: dict[str, str] = {}  # request id -> its action, for the answer's sentence
    current: int | None = None  # the attempt in course: the latest begun
    for line in record.events:
        try:
            event = ev.decode(line.kind, line.data)
        except ev.EventUndecodable as exc:
            entries.append(TimelineEntry(line.seq, line.at, line.kind, current, Actor.SUPERVISOR, None,
                                         f"{line.kind}: not read by this build ({exc})", dict(line.data), False))
            continue
        if isinstance(event, ev.JobRecorded) and head is None:
            head = event
        number = getattr(event, "attempt", None)
        if isinstance(number, int):
            current = max(current or 0, number)
        if isinstance(event, ev.Requested):
            actions[event.request] = event.action
        actor, command = _actor(event)
        entries.append(TimelineEntry(line.seq, line.at, line.kind, number if isinstance(number, int) else current,
                                     actor, command, _sentence(event, actions), dict(line.data)))
    return Timeline(
        job=str(record.job), cluster=head.cluster if head else "", adapter=head.adapter if head else "",
        host=(head.host or None) if head else None, location=location or (head.location if head else ""),
        bound=bound, entries=tuple(entries), truncated_tail=record.truncated_tail)


def _actor(event: ev.Event) -> tuple[Actor, str | None]:
    match event:
        case ev.JobRecorded():
            return Actor.COMMAND, "submit"
        case ev.Requested(action=action):
            return Actor.COMMAND, action
        case ev.Pruned():
            return Actor.COMMAND, "prune"
        case _ if isinstance(event, _SCHEDULER_ANSWERS):
            return Actor.SCHEDULER, None
    return Actor.SUPERVISOR, None


# The sentence of each kind of event that only names its fields; the others are worked out below.
_TEMPLATES: dict[type[ev.Event], str] = {
    ev.Created: "created {e.object_id}, held",
    ev.Refused: "refused the create, no object made: {e.detail}",
    ev.Unknown: "no answer to the create (an object may exist; never sent again): {e.detail}",
    ev.Found: "found {e.object_id} by the attempt's nonce",
    ev.Confirmed: "confirmed {e.object_id} carries the attempt's nonce",
    ev.Absent: "not listed by a complete query (absence alone is no ending)",
    ev.Cancelling: "asks the scheduler to stop {e.object_id}",
    ev.Escalated: "escalated ({e.reason}): {e.detail}",
    ev.MovedToResidual: "moved to the residual list ({e.reason}): sweeps look for its object",
    ev.HeldByUser: "held {e.object_id} until a release",
    ev.Requeueing: "sends the requeue of {e.object_id}: never sent twice",
    ev.Requeued: "requeued {e.object_id}",
    ev.ActionFailed: "{e.action} not carried out: {e.detail}",
    ev.Settled: "settled: nothing outstanding",
    ev.Pruned: "pruned: the job leaves list (its record is kept)",
    ev.NoticeDelivered: "notice {e.id} delivered to notify.command",
}


def _recorded(e: ev.JobRecorded, actions: Mapping[str, str]) -> str:
    what = shlex.join(e.command) if e.command else (e.script or "")
    most = f"at most {e.max_attempts} attempt{'s' if e.max_attempts != 1 else ''}"
    workdir = f", in {e.workdir}" if e.workdir else ""
    waits = "".join(f"; {key} {', '.join(names)}" for key, names in
                    (("after", e.after), ("after_any", e.after_any), ("after_each", e.after_each)) if names)
    return f"recorded: {what} (cluster {e.cluster}, {e.adapter}; {most}{workdir}{waits})"


def _submitting(e: ev.Submitting, actions: Mapping[str, str]) -> str:
    """The create's intent, with the attempt's own needs and why when something gave it those."""
    said = f"sends the create request, held (nonce {e.nonce}): never sent twice"
    if e.cause is None and all(getattr(e, name) is None for name in NEED_NAMES):
        return said
    needs = " ".join(Resources(*(getattr(e, name) for name in NEED_NAMES)).shown()) or "no needs"
    return f"{said}; needs {needs} ({e.cause or 'its own'}{f': {e.why}' if e.why else ''})"


def _requested(e: ev.Requested, actions: Mapping[str, str]) -> str:
    said = f"asks to {e.action} (request {e.request})"
    needs = " ".join(Resources(*(getattr(e, name) for name in NEED_NAMES)).shown())
    return f"{said} with {needs}" if needs else said


def _released(e: ev.Released, actions: Mapping[str, str]) -> str:
    paths = [f"{name} {path}" for name, path in (("stdout", e.stdout), ("stderr", e.stderr))
             if path is not None and (name == "stdout" or path != e.stdout)]
    return f"released {e.object_id}" + (f" ({', '.join(paths)})" if paths else "")


def _observed(e: ev.Observed, actions: Mapping[str, str]) -> str:
    code = f", exit code {e.exit_code}" if e.exit_code is not None else ""
    sig = f", signal {e.signal}" if e.signal is not None else ""
    why = f": {e.reason}" if e.reason else ""
    return f"{e.object_id} {e.state}{code}{sig}{why}"


def _delivered(e: ev.Delivered, actions: Mapping[str, str]) -> str:
    return f"escalation {e.index + 1} delivered to the configured command"


def _answered(e: ev.Answered, actions: Mapping[str, str]) -> str:
    detail = f": {e.detail}" if e.detail else ""
    return f"{e.result} {actions.get(e.request, 'the request')} (request {e.request}){detail}"


def _outcome(e: ev.OutcomeReached, actions: Mapping[str, str]) -> str:
    return f"outcome {e.result}" + (f": {e.detail}" if e.detail else "")


# The sentence of each kind of event that is more than its fields (the answered request's action is
# looked up in ``actions``: request id -> action).
_COMPOSED: dict[type[ev.Event], Callable[[Any, Mapping[str, str]], str]] = {
    ev.JobRecorded: _recorded, ev.Released: _released, ev.Observed: _observed, ev.Delivered: _delivered,
    ev.Answered: _answered, ev.OutcomeReached: _outcome, ev.Submitting: _submitting, ev.Requested: _requested,
}


def _sentence(event: ev.Event, actions: Mapping[str, str]) -> str:
    template = _TEMPLATES.get(type(event))
    if template is not None:
        return template.format(e=event)
    return _COMPOSED[type(event)](event, actions)


# ------------------------------------------------------------------------------------------- rendering


def line_host(tl: Timeline, entry: TimelineEntry) -> str | None:
    """The host a line was committed on, where the record can say (a host's own store): None else."""
    return tl.host if tl.bound and entry.actor is not Actor.SCHEDULER else None


def who(tl: Timeline, entry: TimelineEntry) -> str:
    """Who acted, as shown: ``supervisor@login1``, ``scheduler``, ``cancel@login1`` (a command's name)."""
    if entry.actor is Actor.SCHEDULER:
        return "scheduler"
    name = entry.command if entry.actor is Actor.COMMAND and entry.command else str(entry.actor)
    host = line_host(tl, entry)
    return f"{name}@{host}" if host else name


def lines(tl: Timeline, zone: tzinfo | None = None) -> Iterator[str]:
    """The timeline as the terminal shows it: a header, then one line per entry, a heading at each change
    of attempt. Times in ``zone`` (None: the process's local zone). Every text is escaped: one line each."""
    where = f", submitted on host {tl.host}" if tl.host else ""
    shared = "" if tl.bound else " (shared by login nodes)"
    yield escaped(f"job {tl.job}: cluster {tl.cluster} ({tl.adapter}){where}, recorded in {tl.location}{shared}")
    width = max((len(who(tl, e)) for e in tl.entries), default=0)
    group: int | None = None
    seen: set[int | None] = {None}
    for entry in tl.entries:
        if entry.attempt != group:
            group = entry.attempt
            yield escaped(_heading(tl, group, again=group in seen))
            seen.add(group)
        at = entry.at.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S")
        yield escaped(f"  {at}  {who(tl, entry):<{width}}  {entry.text}")
    if tl.truncated_tail:
        yield "  (the record's last line did not read whole: a write cut short, not shown)"


def _heading(tl: Timeline, attempt: int | None, *, again: bool) -> str:
    if attempt is None:
        return "the job"
    objects = {e.data.get("object_id") for e in tl.entries if e.attempt == attempt and e.data.get("object_id")}
    named = f" (object {', '.join(sorted(str(o) for o in objects))})" if objects else ""
    return f"attempt {attempt}{named}{' (continued)' if again else ''}"


def entry_json(tl: Timeline, entry: TimelineEntry) -> dict[str, Any]:
    """One event as ``events --json`` prints it (docs/json.md): one object per line."""
    return {
        "job": tl.job,
        "seq": entry.seq,
        "at": entry.at.isoformat(),
        "attempt": entry.attempt,
        "kind": entry.kind,
        "actor": str(entry.actor),
        "command": entry.command,
        "host": line_host(tl, entry),
        "text": entry.text,
        "data": dict(entry.data),
        "readable": entry.readable,
    }


def json_lines(tl: Timeline) -> Iterable[str]:
    """``events --json``: one JSON object per line (control characters escaped by JSON itself)."""
    for entry in tl.entries:
        yield json.dumps(entry_json(tl, entry), sort_keys=False)

