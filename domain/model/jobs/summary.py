"""A job's summary: the few facts ``list`` and the notices need, kept by the store with every append.

The record stays the only truth. A summary is defined as ``summarize(fold(record))`` (or, for a record
that does not read, why), and a store keeps it current by carrying the folded state from one append to
the next (``SummaryCarry``) instead of folding the whole record again, so ``list`` reads one table and
``status`` never folds every record. ``rebuild`` makes it from the events alone (a migration, doctor).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import ObjectState
from dunscaith.domain.model.jobs.record import EventLine, JsonValue
from dunscaith.domain.model.jobs.settlement import outstanding
from dunscaith.domain.model.jobs.state import (
    RERUN,
    AttemptState,
    JobState,
    OutcomeKind,
    apply,
    decoded_lines,
    initial,
    label,
    resume,
)

DAMAGED = "damaged"  # the state word of a record that does not read


@dataclass(frozen=True, slots=True)
class JobSummary:
    job: JobId
    seq: int  # the last event this summary includes
    state: str  # label(state), or "damaged"
    cluster: str
    adapter: str
    outcome: str | None  # an OutcomeKind value, once there is one
    outcome_detail: str
    settled: bool
    attempts: int
    object_id: str | None  # the current attempt's object, when it has one
    recorded_at: datetime
    updated_at: datetime
    pruned_at: datetime | None
    outstanding: int  # work that keeps the record open, undelivered escalations aside
    undelivered: int  # escalations not yet passed to the escalation command
    problem: str | None = None  # why the record does not read (then every other fact is the record's head)
    sweep: JobId | None = None  # the sweep the job is an element of (its first event says), and its index
    sweep_index: int | None = None

    def left(self, *, delivering: bool) -> int:
        """How much work is outstanding, as ``settlement.outstanding`` counts it under that setting."""
        return self.outstanding + (self.undelivered if delivering else 0)


class Summarised:
    """What the summaries of a group's jobs say together (a sweep's elements, a pipeline's jobs): the one
    row ``list`` and ``status NAME`` show for the group. A subclass says which summaries are its jobs'."""

    __slots__ = ()

    @property
    def summaries(self) -> Sequence[JobSummary]:
        raise NotImplementedError

    @property
    def clusters(self) -> list[str]:
        return sorted({s.cluster for s in self.summaries})

    @property
    def recorded_at(self) -> datetime:
        return min(s.recorded_at for s in self.summaries)

    @property
    def updated_at(self) -> datetime:
        return max(s.updated_at for s in self.summaries)

    @property
    def failed(self) -> bool:
        """Whether some job's outcome is not success (what ``status NAME`` exits 1 for)."""
        return any(s.outcome is not None and s.outcome != OutcomeKind.SUCCEEDED for s in self.summaries)


class UnattendedJob(NamedTuple):
    """What the Unattended notice says of a job: its name, its summary's state and its sweep. A tuple, not
    a summary: the notice names every Unattended job, 10,000 of them as cheaply as the query that finds
    them."""

    job: JobId
    state: str
    sweep: JobId | None


def state_words() -> list[str]:
    """Every word a summary's state can be (what ``label`` says, and damaged): what ``list --state`` takes."""
    words = ["recorded", "held", RERUN, *ObjectState, *AttemptState, *OutcomeKind, DAMAGED]
    return sorted({str(word) for word in words})


@dataclass(frozen=True, slots=True)
class SummaryQuery:
    """Which summaries ``list`` asks for, newest first."""

    include_pruned: bool = False
    state: str | None = None
    cluster: str | None = None
    since: datetime | None = None  # recorded at or after
    limit: int | None = None  # None: all of them
    sweep: str | None = None  # the elements of this sweep only
    prefix: str | None = None  # the jobs whose names begin so only (a pipeline's: ``NAME.``)

    def matches(self, s: JobSummary) -> bool:
        """Whether ``s`` is one this query asks for, its limit aside."""
        return ((self.include_pruned or s.pruned_at is None) and self.state in (None, s.state)
                and self.cluster in (None, s.cluster) and (self.since is None or s.recorded_at >= self.since)
                and self.sweep in (None, s.sweep) and (self.prefix is None or s.job.startswith(self.prefix)))

    @property
    def filtered(self) -> bool:
        """Whether it asks for some jobs only (a state, a cluster, a time), pruned ones aside."""
        return (self.state is not None or self.cluster is not None or self.since is not None
                or self.sweep is not None or self.prefix is not None)


def summarize(state: JobState, seq: int, job: JobId | None = None) -> JobSummary:
    """``job``: the name the store keeps the record under (by default the name its first event gives)."""
    current = state.current
    return JobSummary(
        job=state.name if job is None else job, seq=seq, state=label(state), cluster=state.spec.cluster,
        adapter=state.spec.adapter,
        outcome=None if state.outcome is None else str(state.outcome.kind),
        outcome_detail="" if state.outcome is None else state.outcome.detail, settled=state.settled,
        attempts=len(state.attempts), object_id=current.object_id if current is not None else None,
        recorded_at=state.recorded_at, updated_at=state.updated_at or state.recorded_at, pruned_at=state.pruned_at,
        outstanding=len(outstanding(state)), undelivered=sum(not e.delivered for e in state.escalations),
        sweep=state.spec.member.sweep if state.spec.member else None,
        sweep_index=state.spec.member.index if state.spec.member else None)


def unreadable(job: JobId, seq: int, recorded_at: datetime, updated_at: datetime, problem: str) -> JobSummary:
    return JobSummary(job=job, seq=seq, state=DAMAGED, cluster="", adapter="", outcome=None, outcome_detail="",
                      settled=False, attempts=0, object_id=None, recorded_at=recorded_at, updated_at=updated_at,
                      pruned_at=None, outstanding=0, undelivered=0, problem=problem)


class SummaryCarry:
    """The fold of one record so far, carried from append to append: each step is one event's work.

    A record that stops reading stays unreadable (the fold is a left fold: its first bad event decides),
    so the carry then only counts events.
    """

    __slots__ = ("_every", "_problem", "_recorded_at", "_state", "_updated_at", "job", "seq", "snapshot")

    def __init__(self, job: JobId, at: datetime, kind: str, data: Mapping[str, JsonValue],
                 every: int = snapshot.EVERY) -> None:
        self.job, self.seq, self._every = job, 1, every
        # the newest snapshot made while folding (snapshot.py): (its seq, the snapshot), None before one
        self.snapshot: tuple[int, dict[str, JsonValue]] | None = None
        self._recorded_at = self._updated_at = at
        self._state: JobState | None = None
        self._problem: str | None = None
        try:
            self._state = initial(at, ev.decode(kind, data))
        except JobsError as exc:
            self._problem = str(exc)

    @classmethod
    def damaged(cls, job: JobId, seq: int, recorded_at: datetime, updated_at: datetime, problem: str) -> SummaryCarry:
        """The carry of a record whose events do not decode (the store says why)."""
        carry = cls.__new__(cls)
        carry.job, carry.seq, carry._every, carry.snapshot = job, seq, snapshot.EVERY, None
        carry._recorded_at, carry._updated_at = recorded_at, updated_at
        carry._state, carry._problem = None, problem
        return carry

    def step(self, at: datetime, kind: str, data: Mapping[str, JsonValue]) -> None:
        self.seq += 1
        self._updated_at = at
        if self._state is None:
            return
        try:
            self._state = apply(self._state, ev.decode(kind, data), at)
        except JobsError as exc:  # the snapshot made before still holds for the events it covers
            self._state, self._problem = None, str(exc)
            return
        if snapshot.due(self.seq, self._every):
            self.snapshot = _kept(self._state, self.seq) or self.snapshot

    def fresh_snapshot(self) -> dict[str, JsonValue] | None:
        """The snapshot the last step made, for the store to keep in that append's transaction."""
        return self.snapshot[1] if self.snapshot is not None and self.snapshot[0] == self.seq else None

    def summary(self) -> JobSummary:
        if self._state is None:
            return unreadable(self.job, self.seq, self._recorded_at, self._updated_at, self._problem or "")
        return summarize(self._state, self.seq, self.job)


def resumed(job: JobId, kept: Mapping[str, JsonValue], after: int, lines: Sequence[EventLine],
            every: int = snapshot.EVERY) -> SummaryCarry | None:
    """The carry of a record from its snapshot (kept at event ``after``) and the ``lines`` after it: what
    ``rebuild`` of the whole record gives (the fold carries only the state), at the cost of the lines.

    None when that cannot be told from them: the snapshot is not this build's or does not decode, the
    lines are not the ones right after it, they span a seq where a newer snapshot is due (one that
    was never made), or one does not fold (the whole record then says at which event, as ``rebuild``
    does)."""
    if any(line.seq != after + n or snapshot.due(line.seq, every) for n, line in enumerate(lines, start=1)):
        return None
    try:
        state = resume(snapshot.decode(kept, after), decoded_lines(lines))
    except JobsError:
        return None
    carry = SummaryCarry.__new__(SummaryCarry)
    carry.job, carry.seq, carry._every, carry.snapshot = job, after + len(lines), every, None
    carry._recorded_at, carry._updated_at = state.recorded_at, lines[-1].at if lines else state.recorded_at
    carry._state, carry._problem = state, None
    return carry


def rebuild(job: JobId, lines: Iterable[EventLine], every: int = snapshot.EVERY) -> SummaryCarry:
    """The carry (and so the summary, and the newest snapshot) of a whole record, from its events alone.

    One fold over the events (state.resume), frozen only where a snapshot is due: what stepping the
    carry event by event gives, at a fold's cost rather than a frozen state per event (a migration, doctor,
    and an append whose carry another process made stale all fold whole records)."""
    items = list(lines)
    if not items:
        raise JobsError(f"the record of job {job} holds no event")
    first = items[0]
    carry = SummaryCarry(job, first.at, first.kind, first.data, every)
    carry.seq, carry._updated_at = len(items), items[-1].at
    if carry._state is None:
        return carry
    try:
        carry._state = _fold_on(carry, carry._state, items, every, only_last=True)
    except JobsError:
        # the snapshot a carry stepped event by event keeps is the last due before the first bad event
        try:
            _fold_on(carry, carry._state, items, every, only_last=False)
        except JobsError as exc:
            carry._state, carry._problem = None, str(exc)
    return carry


def _fold_on(carry: SummaryCarry, state: JobState, items: list[EventLine], every: int, *, only_last: bool) -> JobState:
    """``state`` (the fold of ``items[0]``) with the rest of ``items`` folded on, ``carry.snapshot`` set at
    the last due seq (``only_last``), or at every due seq in turn (so it stays at the last one before a
    bad event)."""
    dues = [seq for seq in range(every, len(items) + 1, every) if seq > 1]
    if only_last:
        dues = dues[-1:]
    start = 1
    for due_seq in dues:
        state = resume(state, decoded_lines(items[start:due_seq]))
        carry.snapshot = _kept(state, due_seq) or carry.snapshot
        start = due_seq
    return resume(state, decoded_lines(items[start:]))


def _kept(state: JobState, seq: int) -> tuple[int, dict[str, JsonValue]] | None:
    """The snapshot of ``state`` at ``seq``, or None if it cannot be made: a snapshot only saves folding,
    so neither the append it would join nor a rebuild ever fails for one (the one before still holds)."""
    try:
        return seq, snapshot.encode(state, seq)
    except Exception:
        return None
