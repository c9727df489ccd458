"""The job commands (hold, release, cancel, give-up, abandon): one actor per job, one answer per request.

With a live supervisor (it holds the job's lock) the command appends a request to the record and waits
for the supervisor's answer. With none, the command takes the lock itself, answers its own request by
the same rules, carries out what it asked (never a new attempt), commits, and releases the lock. A
supervisor that goes away while a command waits leaves its lock free: the command then takes it and
answers. A request that is not answered in time stays in the record and is answered once, later.

A cancel waits on for its stop: once confirmed (the object is asked to stop) the command says so through
``on_confirmed``, and returns when the record says the object ended (the job's outcome), or at the wait's
end with the object still stopping (the supervisor carries it on).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.attempt_needs import needs_fields
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import ENDED
from dunscaith.domain.model.jobs.record import JobRecord
from dunscaith.domain.model.jobs.requests import FAILED, carried_out
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.state import Action, JobState, decoded, fold, fold_events
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_store import AppendWatch, JobLock, JobStore, LockBusy

if TYPE_CHECKING:  # the supervisor a command acts with is made (and imported) only when one is needed
    from dunscaith.domain.services.jobs.supervise import Supervisor

_POLL = 0.25  # seconds between reads of the record while waiting for an answer


class Answer(StrEnum):
    CONFIRMED = "confirmed"
    REFUSED = "refused"
    NOT_ANSWERED = "not-answered"


class Answerer(StrEnum):
    SUPERVISOR = "its supervisor"
    THIS_COMMAND = "this command"


@dataclass(frozen=True, slots=True)
class CommandResult:
    job: JobId
    action: Action
    request: str
    answer: Answer
    detail: str
    by: Answerer | None
    state: JobState | None  # the job as the command last read it
    problem: str = ""  # what could not be carried out yet (the next actor carries it on)
    stopped: bool | None = None  # a carried-out cancel: whether the object ended before the command returned


def stopped(state: JobState) -> bool:
    """Whether a cancelled job's object has ended (or the job has its outcome): nothing of it runs."""
    if state.outcome is not None:
        return True
    current = state.current
    return current is None or current.object_id is None or current.object_state in ENDED


def new_request_id() -> str:
    return secrets.token_hex(8)


class JobCommands:
    def __init__(self, store: JobStore, clock: Clock, crash: CrashPoints, supervisor: Callable[[], Supervisor],
                 wait: float = 60.0, ids: Callable[[], str] = new_request_id, needs: Resources | None = None) -> None:
        self._store = store
        self._needs = needs  # resubmit --memory 8G ...: the needs its requests give the new attempt
        self._clock = clock
        self._crash = crash
        self._supervisor = supervisor
        self._wait = wait
        self._ids = ids
        self._watch: AppendWatch | None = None  # while a command waits: a wake for each append
        self._watched = False

    def __call__(self, job: JobId, action: Action, cancel: Interrupts,
                 on_confirmed: Callable[[CommandResult], None] | None = None, *,
                 wait_stop: bool = True) -> CommandResult:
        """UnknownJob when not recorded; JobsError (EventUndecodable, RecordInconsistent) when it does not read.

        A cancel carried out while its object still stops is told to ``on_confirmed`` (``stopped`` False),
        and waited on until the object ended or the wait is over (unless ``wait_stop`` is False: a sweep's
        elements are asked one after the other, and their stops are their supervisors' to see)."""
        try:
            result = self._ask(job, action, cancel)
            if wait_stop and action is Action.CANCEL and result.answer is Answer.CONFIRMED and not result.problem:
                return self._until_stopped(job, result, cancel, on_confirmed)
            return _unwaited(result)
        finally:
            if self._watch is not None:
                self._watch.close()
            self._watch, self._watched = None, False

    def _nap(self, job: JobId, cancel: Interrupts) -> None:
        """Wait for the next read of the record: woken by an append to it (the store's watch, made on the
        first wait), at most ``_POLL`` (the store may not tell of its lock holder's own appends)."""
        if not self._watched:
            self._watched = True
            try:
                self._watch = self._store.watch_appends(job, cancel.wake)
            except Exception:  # a watch only saves waiting
                self._watch = None
        cancel.wait(_POLL)

    def _until_stopped(self, job: JobId, result: CommandResult, cancel: Interrupts,
                       on_confirmed: Callable[[CommandResult], None] | None) -> CommandResult:
        state = result.state
        if state is not None and stopped(state):
            return replace(result, stopped=True)
        if on_confirmed is not None:
            on_confirmed(replace(result, stopped=False))
        deadline = self._clock.monotonic() + self._wait
        while True:
            # no supervisor: this command looks again itself, under the lock (and records the end it sees)
            state = self._carry_on(job, cancel) if result.by is Answerer.THIS_COMMAND else fold(self._store.read(job))
            if stopped(state):
                return replace(result, state=state, stopped=True)
            if self._clock.monotonic() >= deadline or cancel.pending() is not None:
                return replace(result, state=state, stopped=False)
            self._nap(job, cancel)

    def _carry_on(self, job: JobId, cancel: Interrupts) -> JobState:
        """The state after one more look under the job's lock; the record as it is while another actor holds
        the lock (a supervisor started meanwhile carries the stop on)."""
        try:
            with self._store.lock(job) as lock:
                state, _problem = self._supervisor().carry_out(job, lock, cancel)
                return state
        except LockBusy:
            return fold(self._store.read(job))

    def _ask(self, job: JobId, action: Action, cancel: Interrupts) -> CommandResult:
        fold(self._store.read(job))
        rid = self._ids()
        deadline = self._clock.monotonic() + self._wait
        asked = False
        while True:
            if not asked and self._store.health(job).held:
                self._append(job, self._requested(rid, action))  # the live supervisor answers it
                asked = True
            if asked:
                record = self._store.read(job)
                state = fold(record)
                found = state.request(rid)
                if found is not None and found.result is not None:
                    if found.result != Answer.CONFIRMED:
                        return CommandResult(job, action, rid, Answer(found.result), found.detail,
                                             Answerer.SUPERVISOR, state)
                    # confirmed: wait on for what the scheduler made of it (carried out, or failed)
                    done = what_became(record, rid, action)
                    if done is not None:
                        return CommandResult(job, action, rid, Answer.CONFIRMED, found.detail, Answerer.SUPERVISOR,
                                             state, done)
                    if self._clock.monotonic() >= deadline or cancel.pending() is not None:
                        return CommandResult(job, action, rid, Answer.CONFIRMED, found.detail, Answerer.SUPERVISOR,
                                             state, f"confirmed, but not carried out within {self._wait:g} s; "
                                                    "the supervisor carries it on (see `status`)")
                    self._nap(job, cancel)
                    continue
            if not asked or not self._store.health(job).held:
                try:
                    with self._store.lock(job) as lock:
                        return self._here(job, lock, action, rid, asked, cancel)
                except LockBusy:
                    pass  # a supervisor (or another command) took it first: ask it, or wait for it
            if self._clock.monotonic() >= deadline or cancel.pending() is not None:
                state = fold(self._store.read(job))
                return CommandResult(job, action, rid, Answer.NOT_ANSWERED,
                                     f"not answered within {self._wait:g} s; the request stays in the record and "
                                     "is answered once, by the supervisor or the next command",
                                     None, state)
            self._nap(job, cancel)

    def post(self, job: JobId, action: Action) -> str:
        """A request appended to the job's record for its live supervisor to answer: its id (``look`` at it)."""
        rid = self._ids()
        self._append(job, self._requested(rid, action))
        return rid

    def look(self, job: JobId, action: Action, rid: str) -> CommandResult | None:
        """What became of request ``rid``, posted to a live supervisor: refused, or confirmed and carried
        out (or failed), as the record says; None while it is not answered or not carried out yet."""
        return self.look_at(job, action, rid)[0]

    def look_at(self, job: JobId, action: Action, rid: str) -> tuple[CommandResult | None, int]:
        """``look``, and the seq of the last event it read (a record that has not grown past it says the
        same). The record is read once and each event decoded once."""
        record = self._store.read(job)
        lines = list(decoded(record))
        last = record.events[-1].seq if record.events else 0
        state = fold_events(lines)
        found = state.request(rid)
        if found is None or found.result is None:
            return None, last
        if found.result != Answer.CONFIRMED:
            return CommandResult(job, action, rid, Answer(found.result), found.detail, Answerer.SUPERVISOR,
                                 state), last
        done = _became(lines, rid, action)
        if done is None:
            return None, last
        return CommandResult(job, action, rid, Answer.CONFIRMED, found.detail, Answerer.SUPERVISOR, state, done,
                             stopped(state) if action is Action.CANCEL else None), last

    def answer_here(self, job: JobId, action: Action, rid: str, cancel: Interrupts) -> CommandResult | None:
        """Request ``rid``, appended already, answered by this command under the job's lock (its supervisor
        went away before answering); None when another actor holds the lock now."""
        try:
            with self._store.lock(job) as lock:
                return self._here(job, lock, action, rid, True, cancel)
        except LockBusy:
            return None

    def here(self, job: JobId, action: Action, cancel: Interrupts) -> CommandResult | None:
        """``action`` of a job no live supervisor held a moment ago (its lock free): asked and answered by
        this command under the job's lock, with no wait for a stop (a sweep's elements, whose locks were
        asked of the store at once), as ``__call__`` with ``wait_stop=False`` does. None, with nothing
        appended, when another actor took the lock meanwhile: ``post`` the request to it."""
        try:
            with self._store.lock(job) as lock:
                return _unwaited(self._here(job, lock, action, self._ids(), False, cancel))
        except LockBusy:
            return None

    def _here(self, job: JobId, lock: JobLock, action: Action, rid: str, asked: bool,
              cancel: Interrupts) -> CommandResult:
        # read before the request (a record that does not read is refused with nothing appended); a
        # request adds no failure, so what failed after it is what this fold did not count
        before = len(fold(self._store.read(job)).failures)
        if not asked:
            self._append(job, self._requested(rid, action))
        self._crash.reached("request-committed")
        state, problem = self._supervisor().carry_out(job, lock, cancel)
        failed = "; ".join(state.failures[before:])
        problem = "; ".join(p for p in (failed, problem) if p)
        found = state.request(rid)
        if found is None or found.result is None:  # the record could not take the answer: it stays asked
            return CommandResult(job, action, rid, Answer.NOT_ANSWERED, problem or "the answer was not recorded",
                                 None, state, problem)
        return CommandResult(job, action, rid, Answer(found.result), found.detail, Answerer.THIS_COMMAND, state,
                             problem)

    def _requested(self, rid: str, action: Action) -> ev.Requested:
        """The request's event: a resubmit's with the needs given for the new attempt."""
        if action is Action.RESUBMIT and self._needs is not None:
            return ev.Requested(rid, str(action), **needs_fields(self._needs))
        return ev.Requested(rid, str(action))

    def _append(self, job: JobId, event: ev.Event) -> None:
        kind, data = ev.encode(event)
        self._store.append(job, self._clock.now(), kind, data)


def _unwaited(result: CommandResult) -> CommandResult:
    """A result as it is returned when its stop is not waited for: a cancel carried out says whether its
    object had ended already (``stopped``)."""
    if result.action is not Action.CANCEL or result.answer is not Answer.CONFIRMED or result.problem:
        return result
    return replace(result, stopped=result.state is not None and stopped(result.state))


def what_became(record: JobRecord, rid: str, action: Action) -> str | None:
    """"" when the confirmed request ``rid`` was carried out, why not when it failed, None while pending."""
    return _became(list(decoded(record)), rid, action)


def _became(decoded: list[tuple[datetime, ev.Event]], rid: str, action: Action) -> str | None:
    at = next((i for i, (_, e) in enumerate(decoded) if isinstance(e, ev.Answered) and e.request == rid), None)
    if at is None:
        return None
    result = carried_out(action, fold_events(decoded[:at + 1]), [e for _, e in decoded[at + 1:]])
    if result is None:
        return None
    word, detail = result
    return (detail or "the scheduler refused it") if word == FAILED else ""
