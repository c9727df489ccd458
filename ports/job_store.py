"""Where a job's record lives, and the lock that lets one actor at a time act on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import NamedTuple, Protocol

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import JobRecord, JsonValue, LoopHealth, RecordTail, StoreIdentity
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery, UnattendedJob


class StoreError(Exception):
    """The store cannot be read or written now (unreachable, damaged, refused)."""


class JobExists(StoreError):
    """A job of that name is already recorded."""


class UnknownJob(StoreError):
    """No job of that name is recorded."""


class RecordDamaged(StoreError):
    """One job's record does not read (an event that does not decode, a damaged page); others may."""

    def __init__(self, job: str, detail: str, event: int | None = None) -> None:
        at = f" at event {event}" if event is not None else ""
        super().__init__(f"damaged{at}: {detail}")
        self.job = job
        self.detail = detail
        self.event = event


class LockBusy(StoreError):
    """Another actor (a live supervisor or a command) holds the job's lock."""


class LockLost(StoreError):
    """The holder's lock is gone (its session ended, its file was replaced): the holder must stop acting."""


class StoreMissing(StoreError):
    """The store is not there, but pointers of this host name jobs recorded in it: it was moved aside,
    deleted or lost, and a new empty one made in its place would hide that every record is gone."""

    def __init__(self, where: str, jobs: Sequence[str]) -> None:
        shown = ", ".join(jobs[:5]) + (f" and {len(jobs) - 5} more" if len(jobs) > 5 else "")
        super().__init__(
            f"record store {where} is missing, but {len(jobs)} pointer(s) of this host name jobs recorded in it "
            f"({shown}); no new store was made: put it back (restore it from a copy), or, to start anew there, "
            "remove those pointers; dunscaith doctor lists them")
        self.where = where
        self.jobs = tuple(jobs)


class Append(NamedTuple):
    """One event for ``JobStore.append_many``: which record it goes to, and what ``append`` would be given."""

    job: JobId
    at: datetime
    kind: str
    data: Mapping[str, JsonValue]


class JobLock(Protocol):
    """Held for as long as the actor acts on the job; a dead holder releases it (kernel or server side)."""

    def check(self) -> None:
        """Prove the lock is still held, right before an external action; LockLost if it is not.

        A store whose lock can vanish under a live holder (a server's session) asks the server; a
        kernel-held lock verifies its own file. Once lost, a lock stays lost: it is never retaken."""
        ...

    def beat(self, at: datetime, next_at: datetime | None = None) -> None:
        """Record that the holder's loop completed at ``at`` and, with ``next_at``, when it means to loop
        next (display only: a holder that sleeps to its next poll is not late until then). A store may
        keep only ``at``."""
        ...


class AppendWatch(Protocol):
    """A store's notice of appends, for a holder that sleeps between polls (``JobStore.watch_appends``)."""

    def close(self) -> None:
        """Stop watching; ``wake`` is not called after this returns."""
        ...

    def live(self) -> bool:
        """Whether appends are seen now. False while the watch cannot see them (its connection to a
        server lost, being made anew): the holder reads its record every poll interval meanwhile, and
        ``wake`` is called on each change either way."""
        ...


class JobStore(Protocol):
    def create(self, job: JobId, at: datetime, kind: str, data: Mapping[str, JsonValue]) -> None:
        """Record a new job with its first event, durably; JobExists if the name is taken."""
        ...

    def append(self, job: JobId, at: datetime, kind: str, data: Mapping[str, JsonValue]) -> int:
        """Append one event, durable when this returns; the event's sequence number."""
        ...

    def append_many(self, appends: Sequence[Append]) -> list[int]:
        """Each of ``appends`` appended (in order; a job may be named more than once) in ONE transaction:
        every one durable when this returns (one commit, one sync), or none kept at all (UnknownJob for a
        job not recorded, ValueError for a time without a zone or data that is not JSON, LockLost or
        StoreError as ``append``). Each event's sequence number, in order. A phase of a sweep: every
        element's event of it durable before the one request that follows, at the cost of one commit.
        Every job's lock held by this actor, or none of them (PostgreSQL writes a holder's events on its
        locks' session)."""
        ...

    def read(self, job: JobId) -> JobRecord:
        """The job's lines in order; UnknownJob, or RecordDamaged at the first line that does not read.

        Each line's data is read-only, and lines of one text may share one mapping (decoded once per
        read): nothing a caller does to what it read reaches the store, a later read, or another line."""
        ...

    def read_many(self, jobs: Sequence[JobId]) -> dict[JobId, JobRecord]:
        """``read`` of each of ``jobs`` at once: one snapshot, a few statements whatever their number (a
        sweep's elements as its supervision takes them). A job whose record does not read (not recorded,
        damaged) is left out, every other one still read: ``read`` of it says why. Lines as ``read``'s."""
        ...

    def read_tail(self, job: JobId) -> RecordTail:
        """The job's newest folded snapshot, as it was kept, and the lines after it (every line when it
        has none, or when the lines it covers are no longer all there and each a JSON object); UnknownJob,
        or RecordDamaged at the first line after it that does not read. Its lines are as ``read``'s."""
        ...

    def jobs(self) -> list[JobId]:
        """Every job recorded in this store, oldest first."""
        ...

    def last_seqs(self, jobs: Sequence[JobId]) -> dict[JobId, int]:
        """The seq of each job's last event, for all of ``jobs`` at once (one query): whether a record
        grew since it was read, without reading it. A job not recorded is left out."""
        ...

    def summary(self, job: JobId) -> JobSummary:
        """The job's summary, current with its last append (kept in that append's transaction);
        UnknownJob if it is not recorded."""
        ...

    def summaries(self, query: SummaryQuery) -> Iterator[JobSummary]:
        """The summaries ``query`` asks for, newest first, streamed: memory flat in the number of jobs."""
        ...

    def count(self, query: SummaryQuery) -> int:
        """How many summaries ``query`` matches, its limit aside."""
        ...

    def unsettled(self) -> list[JobSummary]:
        """Every readable record that has not settled, oldest first, found by an index (never a fold)."""
        ...

    def unattended(self) -> list[JobSummary]:
        """``unsettled`` less the jobs whose lock is held now (a live supervisor or command), oldest first:
        the Unattended notice's question, in one query on a server whatever the number of jobs."""
        ...

    def unattended_names(self) -> list[UnattendedJob]:
        """``unattended``, each job by its name, state and sweep only (the notice's lines), in the same
        order and by the same one query on a server: no whole summary made for each job."""
        ...

    def rebuild_summaries(self) -> int:
        """Fold every record's events again into its summary (the events are the truth); how many."""
        ...

    def batch(self) -> AbstractContextManager[None]:
        """Creates and appends inside are one transaction, durable on leaving (tools that build stores)."""
        ...

    def lock(self, job: JobId) -> AbstractContextManager[JobLock]:
        """Take the job's lock without waiting; LockBusy if another actor holds it."""
        ...

    def lock_many(self, jobs: Sequence[JobId]) -> Mapping[JobId, AbstractContextManager[JobLock]]:
        """``lock`` of each of ``jobs`` without waiting, taken together (one statement on a server: a sweep's
        fresh elements). Each lock taken is handed back held, as a context that gives it back when left, as
        ``lock``'s does: the caller enters and leaves every one. A job whose lock another actor holds (or
        this one, under another ``lock``) is left out: ``lock`` of it says so. Any other failure raises
        StoreError as ``lock`` does, and then none of them is held."""
        ...

    def locking(self) -> AbstractContextManager[None]:
        """While inside, what this store's locks need is kept between one lock and the next (PostgreSQL:
        the session its locks share stays open while none is held, instead of a new one for each): a
        command taking many jobs' locks one after the other. Each lock is taken and given back as ever."""
        ...

    def health(self, job: JobId) -> LoopHealth:
        """Display only: whether the job's lock is held now and when its holder's loop last completed."""
        ...

    def healths(self, jobs: Sequence[JobId]) -> dict[JobId, LoopHealth]:
        """``health`` of each of ``jobs`` at once (one query on a server: the Unattended notice asks it
        of every job not settled)."""
        ...

    def watch_appends(self, job: JobId, wake: Callable[[], None]) -> AppendWatch | None:
        """Call ``wake`` (from another thread) soon after any writer but ``job``'s lock holder appends to
        its record; it may also be called when nothing was appended to it. None: this store cannot tell,
        and the caller reads the record every poll interval instead; so it does while the watch is not
        ``live``."""
        ...

    def follow_appends(self, job: JobId, wake: Callable[[], None]) -> AppendWatch | None:
        """Call ``wake`` (from another thread) soon after any writer appends to ``job``'s record, its lock
        holder included: a reader following the record as it grows (``watch``), which holds no lock and
        writes nothing. It may also be called when nothing was appended to it. None: this store cannot
        tell, and the follower reads the record every poll interval instead; so it does while the watch
        is not ``live``."""
        ...

    def identity(self) -> StoreIdentity:
        """Which store this is (backend, location, bound host), for a record's first event."""
        ...

    def location(self) -> str:
        """Where the records are, for display and a pointer's record root (a directory, a server)."""
        ...
