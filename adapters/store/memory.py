"""A job store in this process's memory: the runnable fake for tests, same contract as SqliteStore.

Its lock is an in-process table: two handles to the same InMemoryStore exclude each other, other
processes do not see it at all (nothing outside this process can act on these records anyway).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from adapters.store.event_codec import decode_data, decode_time, encode_data, encode_time
from domain.model.jobs.ids import JobId
from domain.model.jobs.record import EventLine, JobRecord, LoopHealth, StoreIdentity
from ports.job_store import JobExists, LockBusy, LockLost, StoreError, UnknownJob


@dataclass
class _Kept:
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (at, kind, data) as encoded


class InMemoryLock:
    def __init__(self, store: InMemoryStore, job: JobId) -> None:
        self._store = store
        self._job = job
        self._held = True

    def check(self) -> None:
        if not self._held:
            raise LockLost(f"the lock of job {self._job} was released; nothing more may be done under it")

    def beat(self, at: datetime) -> None:
        if not self._held:
            raise StoreError(f"the lock of job {self._job} was released; its loop cannot beat")
        beat = encode_time(at)
        with self._store._mutex:
            self._store._beats[self._job] = beat

    def release(self) -> None:
        if self._held:
            self._held = False
            with self._store._mutex:
                self._store._locked.discard(self._job)


class InMemoryStore:
    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._jobs: dict[JobId, _Kept] = {}
        self._locked: set[JobId] = set()
        self._beats: dict[JobId, str] = {}

    def create(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> None:
        line = (encode_time(at), kind, encode_data(data))
        with self._mutex:
            if job in self._jobs:
                raise JobExists(f"job {job} is already recorded")
            self._jobs[job] = _Kept([line])

    def append(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> int:
        line = (encode_time(at), kind, encode_data(data))
        with self._mutex:
            kept = self._jobs.get(job)
            if kept is None:
                raise UnknownJob(f"no job named {job} is recorded")
            kept.events.append(line)
            return len(kept.events)

    def read(self, job: JobId) -> JobRecord:
        with self._mutex:
            kept = self._jobs.get(job)
            if kept is None:
                raise UnknownJob(f"no job named {job} is recorded")
            lines = list(kept.events)
        return JobRecord(
            job=job,
            events=tuple(
                EventLine(seq=i, at=decode_time(at), kind=kind, data=decode_data(data))
                for i, (at, kind, data) in enumerate(lines, start=1)
            ),
        )

    def jobs(self) -> list[JobId]:
        with self._mutex:
            return list(self._jobs)

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

    def health(self, job: JobId) -> LoopHealth:
        with self._mutex:
            beat = self._beats.get(job)
            return LoopHealth(held=job in self._locked, last_loop=decode_time(beat) if beat else None)

    def identity(self) -> StoreIdentity:
        return StoreIdentity(backend="memory", location=self.location())

    def location(self) -> str:
        return f"memory:{id(self):x}"
