"""Prune: let settled jobs go for good, under each job's lock.

For each job, in this order: the residual entry (reason ``pruned``) is made durable first, then the
``pruned`` event is committed, then the job's pointer is removed. A crash between any two leaves at
worst an extra entry or a stale pointer, and pruning again finishes the job: the entry is added once
(the first one stands), the event is committed once, the pointer removed if it is still there. The
record itself is never edited or deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import NoPointer
from dunscaith.domain.model.jobs.prune import not_prunable, old_enough
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualReason
from dunscaith.domain.model.jobs.state import JobState, fold
from dunscaith.domain.model.shown import reason
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.job_store import JobStore, LockBusy, StoreError
from dunscaith.ports.pointers import Pointers
from dunscaith.ports.residual import ResidualList


class Pruning(StrEnum):
    PRUNED = "pruned"  # pruned by this command
    ALREADY = "already-pruned"  # pruned before (a leftover pointer, if any, is removed now)
    REFUSED = "refused"  # not settled, or an actor holds its lock: nothing was done


@dataclass(frozen=True, slots=True)
class PruneResult:
    job: JobId
    result: Pruning
    detail: str
    pruned_at: datetime | None = None
    problem: str = ""  # done, but something for display was not (the pointer could not be removed)


class Prune:
    def __init__(self, store: JobStore, residual: ResidualList, pointers: Pointers, clock: Clock,
                 crash: CrashPoints, delivering: bool = False) -> None:
        self._store = store
        self._residual = residual
        self._pointers = pointers
        self._clock = clock
        self._crash = crash
        self._delivering = delivering

    def one(self, job: JobId) -> PruneResult:
        """UnknownJob when not recorded; JobsError (EventUndecodable, RecordInconsistent) when it does not read."""
        try:
            with self._store.lock(job):
                return self._here(job)
        except LockBusy:
            return PruneResult(job, Pruning.REFUSED, f"job {job} is held by a live supervisor (or another "
                                                     "command): it is not settled")

    def older_than(self, age: timedelta) -> tuple[list[PruneResult], list[str]]:
        """Prune every settled job whose record last changed ``age`` ago or more. What was pruned (or
        found pruned already, with a pointer still to remove), and records that do not read."""
        now = self._clock.now()
        done: list[PruneResult] = []
        problems: list[str] = []
        for job in self._store.jobs():
            try:
                state = fold(self._store.read(job))
            except (JobsError, StoreError) as exc:
                problems.append(f"job {job}: the record does not read ({exc}); it was left alone")
                continue
            if state.pruned_at is not None:
                problem = self._unpoint(job)  # finish a prune a crash left without its pointer removed
                if problem:
                    problems.append(problem)
                continue
            if not old_enough(state, now, age) or not_prunable(state, False, delivering=self._delivering):
                continue  # a young job, or one still at work: left alone, as asked
            try:
                result = self.one(job)
            except (JobsError, StoreError) as exc:
                problems.append(f"job {job}: {exc}; it was left alone")
                continue
            if result.result is not Pruning.REFUSED:
                done.append(result)
            elif result.problem:  # the residual list refused the entry: said, and tried again next time
                problems.append(result.problem)
            # else a supervisor took the job meanwhile: it is at work, not old
        return done, problems

    def _here(self, job: JobId) -> PruneResult:
        state = fold(self._store.read(job))
        if state.pruned_at is not None:
            return PruneResult(job, Pruning.ALREADY, f"job {job} was pruned at {state.pruned_at.isoformat()}",
                               state.pruned_at, self._unpoint(job))
        reason = not_prunable(state, False, delivering=self._delivering)
        if reason is not None:
            return PruneResult(job, Pruning.REFUSED, reason)
        try:
            self._residual.add(self._entry(state))  # durable first: a crash after it leaves an extra entry at worst
        except Exception as exc:  # a home that refuses the write: nothing is recorded, the job stays listed
            why = f"job {job} was not pruned: {exc}"
            return PruneResult(job, Pruning.REFUSED, why, problem=why)
        self._crash.reached("prune-residual-added")
        now = self._clock.now()
        kind, data = ev.encode(ev.Pruned())
        self._store.append(job, now, kind, data)
        self._crash.reached("pruned-committed")
        return PruneResult(job, Pruning.PRUNED, f"job {job} is pruned: its record is kept, its pointer removed, "
                                                "and sweeps stop any object of its name that has not started",
                           now, self._unpoint(job))

    def _entry(self, state: JobState) -> ResidualEntry:
        spec = state.spec
        return ResidualEntry(state.name, spec.cluster, spec.adapter, ResidualReason.PRUNED, None, None,
                             self._clock.now())

    def _unpoint(self, job: JobId) -> str:
        """Remove the job's pointer if it points at this store's host; what went wrong, or ""."""
        here = self._store.identity().host
        try:
            pointer = self._pointers.read(job)
        except NoPointer:  # gone already; a crash may have left its index entry, removed here if ours
            return self._unindex(job, here)
        except Exception as exc:  # a damaged pointer: reported, and left for the user to look at
            return f"pointer of {job} not removed: {exc}"
        if here is not None and pointer.root_host != here:
            return ""  # another host's job of the same name: its pointer is not ours to remove
        try:
            self._pointers.remove(job)
        except Exception as exc:  # display only: the record already says the job is pruned
            return f"pointer of {job} not removed: {reason(exc)}"
        return ""

    def _unindex(self, job: JobId, here: HostIdentity | None) -> str:
        try:
            entry = self._pointers.index_entry(job)
            if entry is not None and (here is None or entry.owner in (here, None)):
                self._pointers.unindex(job)
        except Exception as exc:  # display only, like the pointer
            return f"index entry of {job} not removed: {reason(exc)}"
        return ""
