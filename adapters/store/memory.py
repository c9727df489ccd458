"""A job store in this process's memory: the runnable fake for tests, same contract as SqliteStore.

Its lock is an in-process table: two handles to the same InMemoryStore exclude each other, other
processes do not see it at all (nothing outside this process can act on these records anyway).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dunscaith.adapters.store.event_codec import ReadDecoder, decode_data, decode_time, encode_data, encode_time
from dunscaith.adapters.store.held_locks import Held, each_in_turn
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.attendance import unattended_among
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import EventLine, JobRecord, LoopHealth, RecordTail, StoreIdentity
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryCarry, SummaryQuery, UnattendedJob, rebuild
from dunscaith.ports.job_store import (
    Append,
    JobExists,
    LockBusy,
    LockLost,
    RecordDamaged,
    StoreError,
    UnknownJob,
)


@dataclass
class _Kept:
    carry: SummaryCarry  # the fold so far, stepped with every append (its summary is the job's)
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (at, kind, data) as encoded
    snapshot: tuple[int, str] | None = None  # the newest snapshot (snapshot.py): its seq and its text


class InMemoryLock:
    def __init__(self, store: InMemoryStore, job: JobId) -> None:
        self._store = store
        self._job = job
        self._held = True

    def check(self) -> None:
        if not self._held:
            raise LockLost(f"the lock of job {self._job} was released; nothing more may be done under it")

    def beat(self, at: datetime, next_at: datetime | None = None) -> None:
        if not self._held:
            raise StoreError(f"the lock of job {self._job} was released; its loop cannot beat")
        beat = encode_time(at) if next_at is None else f"{encode_time(at)} {encode_time(next_at)}"
        with self._store._mutex:
            self._store._beats[self._job] = beat

    def release(self) -> None:
        if self._held:
            self._held = False
            with self._store._mutex:
                self._store._locked.discard(self._job)


class _Watch:
    def __init__(self, store: InMemoryStore, job: JobId, wake: Callable[[], None]) -> None:
        self.store, self.job, self.wake = store, job, wake

    def close(self) -> None:
        with self.store._mutex:
            if self in self.store._watches:
                self.store._watches.remove(self)

    def live(self) -> bool:
        return True


class InMemoryStore:
    def __init__(self, snapshot_every: int = snapshot.EVERY, *, watchable: bool = False) -> None:
        """``watchable``: appends wake a watcher (``watch_appends``), as SQLite's and PostgreSQL's do; off
        by default, so a supervisor on it reads its record every poll interval, as without a watch."""
        self._every = snapshot_every
        self._mutex = threading.Lock()
        self._jobs: dict[JobId, _Kept] = {}
        self._locked: set[JobId] = set()
        self._beats: dict[JobId, str] = {}
        self._watchable = watchable
        self._watches: list[_Watch] = []

    def create(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> None:
        line = (encode_time(at), kind, encode_data(data))
        with self._mutex:
            if job in self._jobs:
                raise JobExists(f"job {job} is already recorded")
            carry = SummaryCarry(job, decode_time(line[0]), kind, decode_data(line[2]), self._every)
            self._jobs[job] = _Kept(carry, [line])

    def append(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> int:
        return self.append_many([Append(job, at, kind, data)])[0]

    def append_many(self, appends: Sequence[Append]) -> list[int]:
        lines = [(a.job, (encode_time(a.at), a.kind, encode_data(a.data))) for a in appends]  # refused: none kept
        with self._mutex:
            for job in dict.fromkeys(job for job, _ in lines):
                if job not in self._jobs:
                    raise UnknownJob(f"no job named {job} is recorded")
            seqs = [self._add(self._jobs[job], line) for job, line in lines]
            jobs = {job for job, _ in lines}
            woken = [w.wake for w in self._watches if w.job in jobs]
        for wake in woken:
            wake()
        return seqs

    def _add(self, kept: _Kept, line: tuple[str, str, str]) -> int:
        kept.events.append(line)
        kept.carry.step(decode_time(line[0]), line[1], decode_data(line[2]))
        made = kept.carry.fresh_snapshot()
        if made is not None:  # kept as the SQL stores keep it: its JSON text
            kept.snapshot = (kept.carry.seq, encode_data(made))
        return len(kept.events)

    def _kept(self, job: JobId) -> _Kept:
        """The job's record, under the mutex the caller holds; UnknownJob when no job of that name is recorded."""
        kept = self._jobs.get(job)
        if kept is None:
            raise UnknownJob(f"no job named {job} is recorded")
        return kept

    def read(self, job: JobId) -> JobRecord:
        with self._mutex:
            kept = self._kept(job)
            lines = list(kept.events)
        return JobRecord(job=job, events=tuple(self._lines(lines)))

    def read_many(self, jobs: Sequence[JobId]) -> dict[JobId, JobRecord]:
        records: dict[JobId, JobRecord] = {}
        for job in dict.fromkeys(jobs):  # each through read: a store made from this one sees every read
            with suppress(UnknownJob, RecordDamaged):
                records[job] = self.read(job)
        return records

    def read_tail(self, job: JobId) -> RecordTail:
        with self._mutex:
            kept = self._kept(job)
            after, text = kept.snapshot or (0, None)
            lines = list(kept.events)
        events = tuple(self._lines(lines))[after:]
        return RecordTail(job, decode_data(text) if text is not None else None, after, events)

    def jobs(self) -> list[JobId]:
        with self._mutex:
            return list(self._jobs)

    def summary(self, job: JobId) -> JobSummary:
        with self._mutex:
            kept = self._kept(job)
            return kept.carry.summary()

    def last_seqs(self, jobs: Sequence[JobId]) -> dict[JobId, int]:
        with self._mutex:
            return {job: len(self._jobs[job].events) for job in dict.fromkeys(jobs) if job in self._jobs}

    def summaries(self, query: SummaryQuery) -> Iterator[JobSummary]:
        with self._mutex:
            found = [kept.carry.summary() for kept in reversed(self._jobs.values())]
        found = [s for s in found if query.matches(s)]
        return iter(found if query.limit is None else found[:query.limit])

    def count(self, query: SummaryQuery) -> int:
        with self._mutex:
            return sum(query.matches(kept.carry.summary()) for kept in self._jobs.values())

    def unsettled(self) -> list[JobSummary]:
        with self._mutex:
            found = [kept.carry.summary() for kept in self._jobs.values()]
        return [s for s in found if not s.settled and s.problem is None]

    def unattended(self) -> list[JobSummary]:
        return unattended_among(self.unsettled(), lambda name: self.health(name).held)  # each lock's own probe

    def unattended_names(self) -> list[UnattendedJob]:
        return [UnattendedJob(s.job, s.state, s.sweep) for s in self.unattended()]

    def rebuild_summaries(self) -> int:
        with self._mutex:
            for job in list(self._jobs):
                kept = self._jobs[job]
                kept.carry = rebuild(job, self._lines(kept.events), self._every)
                made = kept.carry.snapshot
                kept.snapshot = None if made is None else (made[0], encode_data(made[1]))
            return len(self._jobs)

    def batch(self) -> AbstractContextManager[None]:
        return nullcontext()

    @staticmethod
    def _lines(kept: list[tuple[str, str, str]]) -> list[EventLine]:
        fields = ReadDecoder().data  # as the other stores read: one mapping per distinct text
        return [EventLine(seq=i, at=decode_time(at), kind=kind, data=fields(data))
                for i, (at, kind, data) in enumerate(kept, start=1)]

    @contextmanager
    def lock(self, job: JobId) -> Iterator[InMemoryLock]:
        with self._mutex:
            if job in self._locked:
                raise LockBusy(f"job {job} is locked by another actor")
            self._locked.add(job)
        held = InMemoryLock(self, job)
        try:
            yield held
        finally:
            held.release()

    def lock_many(self, jobs: Sequence[JobId]) -> dict[JobId, Held[InMemoryLock]]:
        return each_in_turn(self.lock, jobs)  # no round trip to save: each taken in turn

    def locking(self) -> AbstractContextManager[None]:
        return nullcontext()  # each lock is a name in a table (memory) or its own file (SQLite): nothing to keep

    def health(self, job: JobId) -> LoopHealth:
        with self._mutex:
            words = self._beats.get(job, "").split()
        return LoopHealth(held=job in self._locked, last_loop=decode_time(words[0]) if words else None,
                          next_loop=decode_time(words[1]) if len(words) == 2 else None)

    def healths(self, jobs: Sequence[JobId]) -> dict[JobId, LoopHealth]:
        return {job: self.health(job) for job in jobs}

    def watch_appends(self, job: JobId, wake: Callable[[], None]) -> _Watch | None:
        if not self._watchable:
            return None
        watch = _Watch(self, job, wake)
        with self._mutex:
            self._watches.append(watch)
        return watch

    def follow_appends(self, job: JobId, wake: Callable[[], None]) -> _Watch | None:
        return self.watch_appends(job, wake)  # every append wakes a watch here, its holder's too

    def identity(self) -> StoreIdentity:
        return StoreIdentity(backend="memory", location=self.location())

    def location(self) -> str:
        return f"memory:{id(self):x}"

