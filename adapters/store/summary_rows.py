"""How the SQL stores keep a job's summary as one row, and carry the fold from one append to the next.

The summary itself is the domain's (domain/model/jobs/summary.py); this module only maps it to the
``summaries`` columns and back, and keeps the last few carries of this process, so an append that
follows this process's own previous append of the job costs one event's fold. Any other append never
folds the whole record: a carry a few events behind (another process wrote in between) folds those
events on; the first append of a command resumes from the record's snapshot (fewer than
snapshot.EVERY events after it). Only a record with no snapshot this build reads is folded whole, once,
and the snapshot that fold makes is kept, so the next one resumes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Protocol

from dunscaith.adapters.store.event_codec import ReadDecoder, decode_data, decode_time, encode_data, encode_time
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import EventLine
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryCarry, SummaryQuery, rebuild, resumed
from dunscaith.ports.job_store import Append, RecordDamaged

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # the times of a record whose first event does not read

COLUMNS = ("seq", "state", "cluster", "adapter", "outcome", "outcome_detail", "settled", "attempts", "object_id",
           "recorded_at", "updated_at", "pruned_at", "outstanding", "undelivered", "problem", "sweep", "sweep_index")
# Every event of every job, by job then seq: what ``Carries.rebuilt`` folds (both SQL dialects read it alike).
SQL_EVERY_EVENT = (
    "SELECT j.id, j.name, e.seq, e.at, e.kind, e.data FROM jobs j JOIN events e ON e.job_id = j.id "
    "ORDER BY j.id, e.seq"
)
_KEEP = 64  # carries kept per process: a supervisor needs one; a builder walking many jobs, the last few


def to_row(s: JobSummary) -> tuple[Any, ...]:
    return (s.seq, s.state, s.cluster, s.adapter, s.outcome, s.outcome_detail, bool(s.settled), s.attempts,
            s.object_id, encode_time(s.recorded_at), encode_time(s.updated_at),
            encode_time(s.pruned_at) if s.pruned_at else None, s.outstanding, s.undelivered, s.problem, s.sweep,
            s.sweep_index)


def from_row(name: str, row: Sequence[Any]) -> JobSummary:
    (seq, state, cluster, adapter, outcome, detail, settled, attempts, object_id, recorded_at, updated_at,
     pruned_at, left, undelivered, problem, sweep, sweep_index) = row
    # by position, in JobSummary's order: the notice makes 10,000 of these (by keyword, a third more time)
    return JobSummary(JobId(name), int(seq), state, cluster, adapter, outcome, detail, bool(settled), int(attempts),
                      object_id, decode_time(recorded_at), decode_time(updated_at),
                      decode_time(pruned_at) if pruned_at else None, int(left), int(undelivered), problem,
                      JobId(sweep) if sweep is not None else None,
                      int(sweep_index) if sweep_index is not None else None)


def lines_of(rows: Iterable[Sequence[Any]]) -> Iterable[EventLine]:
    """Event rows (seq, at, kind, data) as the domain reads them: each distinct text decoded once (one
    read-only mapping for its rows, as a read hands them), so the fold decodes each distinct event once."""
    fields = ReadDecoder().data
    for seq, at, kind, data in rows:
        yield EventLine(seq=int(seq), at=decode_time(at), kind=kind, data=fields(data))


def checked_lines(job: JobId, rows: Sequence[Sequence[Any]], after: int, where: object) -> tuple[EventLine, ...]:
    """A record's event rows (seq, at, kind, data) after ``after``, each checked: a missing seq, or a row that
    does not read, is that job's damage only (RecordDamaged, saying ``where``): every other job still reads."""
    events = []
    fields = ReadDecoder().data  # each distinct text decoded once in this read
    for expected, (seq, at, kind, data) in enumerate(rows, start=after + 1):
        if seq != expected:
            raise RecordDamaged(job, f"event {expected} is missing from {where}", expected)
        try:
            if not isinstance(kind, str):
                raise TypeError(f"its kind is {type(kind).__name__}, not text")
            events.append(EventLine(seq, decode_time(at), kind, fields(data)))
        except (ValueError, TypeError, RecursionError) as exc:
            raise RecordDamaged(job, f"{exc} (in {where})", seq) from None
    return tuple(events)


class Carries:
    """This process's last carries, by job; one is used only while its seq is the record's last.

    ``every``: how often a record's fold is kept as a snapshot (snapshot.EVERY; tests ask for less)."""

    def __init__(self, every: int = snapshot.EVERY) -> None:
        self._kept: OrderedDict[JobId, SummaryCarry] = OrderedDict()
        self.every = every
        self._room = _KEEP
        self._growing = 0  # inside all_kept: nothing dropped
        self._made_inside: set[JobId] = set()

    def rebuilt(self, rows: Iterable[Sequence[Any]]) -> tuple[list[tuple[Any, ...]], list[tuple[int, int, str]]]:
        """Every record's summary row, and its newest snapshot row where it has one, folded again from all the
        events: ``rows`` (job_id, name, seq, at, kind, data) ordered by job then seq (``SQL_EVERY_EVENT``)."""
        made = list(rebuilt(grouped(rows), self.every))
        return [summary for summary, _ in made], [row for _, row in made if row is not None]

    @contextmanager
    def all_kept(self) -> Iterator[None]:
        """Every carry made inside kept, and as many kept from then on: a sweep's elements are recorded in one
        transaction (``batch``), then each phase appends to every one of them; a carry dropped here would be
        folded again from the record at the first phase."""
        self._growing += 1
        try:
            yield
        finally:
            self._growing -= 1
            if not self._growing:
                self.reserve(len(self._made_inside))
                self._made_inside.clear()
                self._trim()

    def reserve(self, jobs: int) -> None:
        """Keep at least ``jobs`` carries from now on: a sweep's phases append to each of its elements in
        one transaction, and then again in the next; with fewer kept than elements, every append of the
        next phase would fold its record again from the snapshot (~1 ms each, most of a phase's cost)."""
        self._room = max(self._room, jobs)

    def start(self, job: JobId, at: datetime, kind: str, data: str) -> JobSummary:
        carry = SummaryCarry(job, at, kind, decode_data(data), self.every)
        self._keep(carry)
        return carry.summary()

    def step(self, job: JobId, last_seq: int, at: datetime, kind: str, data: str, record: RecordRows
             ) -> tuple[JobSummary, tuple[int, str] | None]:
        """The summary once the event after ``last_seq`` is in, and the snapshot row (seq, text) to keep in
        that append's transaction, if any. Never a fold of the whole record while it has a snapshot this
        build reads: this process's carry caught up on the events after it (another writer appended in
        between), else the record's snapshot and the events after that (``record`` reads them)."""
        carry = self._kept.pop(job, None)
        if carry is not None and carry.seq != last_seq:
            carry = _caught_up(carry, last_seq, record, self.every)
        if carry is None:
            kept = snapshot_of(record.snapshot())
            if kept is not None:
                carry = resumed(job, kept[1], kept[0], list(lines_of(record.after(kept[0]))), self.every)
                carry = carry if carry is not None and carry.seq == last_seq else None
        made = None
        if carry is None:  # no snapshot this build reads (or damage): the whole record, once, and its
            carry = carry_of(job, list(record.after(0)), self.every)  # snapshot kept for the next append
            if carry.snapshot is not None:
                made = (carry.snapshot[0], encode_data(carry.snapshot[1]))
        carry.step(at, kind, decode_data(data))  # the data as a reader gets it back: JSON-decoded
        self._keep(carry)
        fresh = carry.fresh_snapshot()
        return carry.summary(), (carry.seq, encode_data(fresh)) if fresh is not None else made

    def forget(self, job: JobId) -> None:
        """The transaction did not commit: what this process carries for the job may be ahead of it."""
        self._kept.pop(job, None)

    @contextmanager
    def forgotten_unless_committed(self, jobs: Iterable[JobId]) -> Iterator[None]:
        """Around a transaction's appends to ``jobs``: if it does not commit (or is not known to), their carries
        are forgotten, so the next append folds again."""
        try:
            yield
        except BaseException:
            for job in jobs:
                self.forget(job)
            raise

    def clear(self) -> None:
        self._kept.clear()

    def _keep(self, carry: SummaryCarry) -> None:
        self._kept[carry.job] = carry
        if self._growing:
            self._made_inside.add(carry.job)
        else:
            self._trim()

    def _trim(self) -> None:
        while len(self._kept) > self._room:
            self._kept.popitem(last=False)


# One event to append, as the SQL stores write it: (job, at, at encoded, kind, data encoded).
Line = tuple[JobId, datetime, str, str, str]


def append_all(carries: Carries, appends: Sequence[Append], write: Callable[[list[Line], list[JobId]], list[int]]
               ) -> list[int]:
    """``JobStore.append_many`` of a SQL store: ``write`` appends the lines of ``appends`` to those jobs in one
    transaction (``Written``); a carry of theirs that it may not have committed is forgotten."""
    lines = [(a.job, a.at, encode_time(a.at), a.kind, encode_data(a.data)) for a in appends]
    if not lines:
        return []
    jobs = list(dict.fromkeys(line[0] for line in lines))
    carries.reserve(len(jobs))  # the next phase of the same jobs steps each carry on
    with carries.forgotten_unless_committed(jobs):
        return write(lines, jobs)


class Written:
    """What one transaction's appends leave to write once each job's last event of them is in: the seq each
    event got, and each job's summary row and snapshot row (when one is due), one row per job."""

    def __init__(self, carries: Carries) -> None:
        self._carries = carries
        self.seqs: list[int] = []
        self.last: dict[JobId, tuple[int, int]] = {}  # job -> (its id, its last seq so far)
        self._summaries: dict[int, JobSummary] = {}
        self._snapshots: dict[int, tuple[int, str]] = {}

    def step(self, job: JobId, job_id: int, seq: int, at: datetime, kind: str, data: str, record: RecordRows) -> None:
        """The event ``seq`` of ``job`` is appended in this transaction (``record`` reads what came before)."""
        summary, made = self._carries.step(job, seq - 1, at, kind, data, record)
        self._summaries[job_id] = summary
        if made is not None:  # a fold to keep (snapshot.due, or one made anew): in its transaction
            self._snapshots[job_id] = made  # a later one of the job's replaces it (the snapshot is one row)
        self.last[job] = (job_id, seq)
        self.seqs.append(seq)

    def summary_rows(self) -> list[tuple[Any, ...]]:
        return [(job_id, *to_row(summary)) for job_id, summary in self._summaries.items()]

    def snapshot_rows(self) -> list[tuple[Any, ...]]:
        return [(job_id, *made) for job_id, made in self._snapshots.items()]


class RecordRows(Protocol):
    """What an append reads of its record, inside its transaction, when its carry is not current."""

    def snapshot(self) -> Sequence[Any] | None:
        """The record's snapshot row (seq, text), or None."""
        ...

    def after(self, seq: int) -> Iterable[Sequence[Any]]:
        """The event rows (seq, at, kind, data) after ``seq``, in order."""
        ...


def _caught_up(carry: SummaryCarry, last_seq: int, record: RecordRows, every: int) -> SummaryCarry | None:
    """``carry`` with the events other writers appended since (fewer than a snapshot's span), or None."""
    if not carry.seq < last_seq < carry.seq + every:
        return None
    lines = list(lines_of(record.after(carry.seq)))
    if [line.seq for line in lines] != list(range(carry.seq + 1, last_seq + 1)):
        return None
    for line in lines:
        carry.step(line.at, line.kind, line.data)
    return carry


def carry_of(job: JobId, rows: Sequence[Sequence[Any]], every: int = snapshot.EVERY) -> SummaryCarry:
    """The carry of a whole record from its rows; a row that does not decode makes it unreadable (why),
    as reading the record would say, never an error of the append or rebuild that asked."""
    try:
        return rebuild(job, lines_of(rows), every)
    except (ValueError, TypeError, RecursionError) as exc:
        try:
            first, last = decode_time(rows[0][1]), decode_time(rows[-1][1])
        except (ValueError, TypeError, IndexError):
            first = last = EPOCH
        return SummaryCarry.damaged(job, len(rows), first, last, f"an event does not decode: {exc}")


def rebuilt_rows(job_rows: Iterable[tuple[int, str, Sequence[Sequence[Any]]]]) -> Iterable[tuple[Any, ...]]:
    """(job_id, *summary columns) for each (job_id, name, event rows) given: a migration, doctor."""
    for job_id, name, rows in job_rows:
        yield (job_id, *to_row(carry_of(JobId(name), rows).summary()))


def rebuilt(job_rows: Iterable[tuple[int, str, Sequence[Sequence[Any]]]], every: int = snapshot.EVERY
            ) -> Iterable[tuple[tuple[Any, ...], tuple[int, int, str] | None]]:
    """For each (job_id, name, event rows) given: (job_id, *summary columns), and the record's newest
    snapshot row (job_id, seq, text) or None (no due event, or the record does not read): doctor, a
    migration."""
    for job_id, name, rows in job_rows:
        carry = carry_of(JobId(name), rows, every)
        made = carry.snapshot
        yield (job_id, *to_row(carry.summary())), None if made is None else (job_id, made[0], encode_data(made[1]))


def snapshot_of(row: Sequence[Any] | None) -> tuple[int, dict[str, Any]] | None:
    """A snapshot row (seq, text) as (seq, mapping); None for none, or one whose text does not decode."""
    if row is None:
        return None
    seq, text = row
    try:
        return int(seq), decode_data(text)
    except (ValueError, TypeError, RecursionError):
        return None


def grouped(rows: Iterable[Sequence[Any]]) -> Iterable[tuple[int, str, list[Sequence[Any]]]]:
    """Rows (job_id, name, seq, at, kind, data) ordered by job then seq, as one group per job."""
    current: tuple[int, str] | None = None
    events: list[Sequence[Any]] = []
    for job_id, name, seq, at, kind, data in rows:
        if current is not None and current[0] != job_id:
            yield current[0], current[1], events
            events = []
        current = (job_id, name)
        events.append((seq, at, kind, data))
    if current is not None:
        yield current[0], current[1], events


def newest_first(select: str, query: SummaryQuery, mark: str) -> tuple[str, list[Any]]:
    """``select`` (of ``summaries s``) narrowed by ``query``, newest job first, at most its limit; its arguments."""
    clause, args = where(query, mark)
    sql = f"{select}{clause} ORDER BY s.job_id DESC"
    if query.limit is not None:
        sql, args = f"{sql} LIMIT {mark}", [*args, query.limit]
    return sql, args


def where(query: SummaryQuery, mark: str) -> tuple[str, list[Any]]:
    """The WHERE clause (on ``summaries s``) of ``query``, its limit aside, with ``mark`` placeholders."""
    clauses: list[str] = []
    args: list[Any] = []
    if not query.include_pruned:
        clauses.append("s.pruned_at IS NULL")
    for column, value in (("state", query.state), ("cluster", query.cluster), ("sweep", query.sweep),
                          ("recorded_at", encode_time(query.since) if query.since is not None else None)):
        if value is not None:
            clauses.append(f"s.{column} {'>=' if column == 'recorded_at' else '='} {mark}")
            args.append(value)
    if query.prefix is not None:  # the names' table, as count() reads summaries alone (no join to it)
        clauses.append(f"s.job_id IN (SELECT id FROM jobs WHERE substr(name, 1, {len(query.prefix)}) = {mark})")
        args.append(query.prefix)
    return (f" WHERE {' AND '.join(clauses)}" if clauses else ""), args
