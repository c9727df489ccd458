"""Supervise: the executor of the supervision engine for one job, from its record to its outcome.

Each loop: perform what the engine decides (``domain/model/jobs/engine.py``; each step's answer committed
before the next request, ``supervise_steps.Executor``), one batched query, commit what it says, beat the
lock. Nothing is ever sent twice: a create whose answer is lost is recorded ``unknown`` and only ever found
again by its nonce, never resent. A job alone and a sweep's elements are each such a loop (``rounds``),
paced by the one pass loop (``passes.Passes``; one job: ``passes.supervise_one``), carried on without a
step where a step would provably do nothing (``supervise_carry``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Iterable, Iterator
from datetime import datetime, timedelta

from dunscaith.domain.model.jobs import supervision as sv
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.kinds import Capabilities, declared_nothing
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.settlement import Outstanding, outstanding
from dunscaith.domain.model.jobs.state import JobState, fold
from dunscaith.domain.services.jobs.notify import Notifier
from dunscaith.domain.services.jobs.supervise_carry import Carrying
from dunscaith.domain.services.jobs.supervise_loop import (
    Ending,
    Loop,
    Means,
    SuperviseSettings,
    SupervisionEnd,
    new_nonce,
    output_paths,
)
from dunscaith.domain.services.jobs.supervise_pacing import QueryClock, Watches
from dunscaith.domain.services.jobs.supervise_steps import Deliveries, Executor, Record, without_residual
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.escalation_delivery import EscalationDelivery
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_progress import JobProgress
from dunscaith.ports.job_store import AppendWatch, JobLock, JobStore, LockLost, StoreError
from dunscaith.ports.residual import ResidualList
from dunscaith.ports.scheduler import Scheduler

__all__ = ["Ending", "Loop", "Rounds", "SuperviseSettings", "SupervisionEnd", "Supervisor", "new_nonce",
           "output_paths"]

# One job's supervision paced by the pass loop (``Supervisor.rounds``, ``passes.Passes``): yields (the loop,
# seconds to pause), is sent whether a stop was requested during the pause, returns the ending.
Rounds = Generator[tuple[Loop, float], bool, SupervisionEnd]


class Supervisor:
    def __init__(self, store: JobStore, scheduler: Scheduler, clock: Clock, crash: CrashPoints,
                 progress: JobProgress, settings: SuperviseSettings, policy: Policy,
                 nonces: Callable[[], Nonce] = new_nonce, delivery: EscalationDelivery | None = None,
                 residual: ResidualList | None = None, capabilities: Capabilities = declared_nothing,
                 notifier: Notifier | None = None) -> None:
        self._means = means = Means(store, scheduler, clock, crash, progress)
        self._notifier = notifier  # notices to notify.command (domain/services/jobs/notify.py), by the same path
        self._clock = clock
        self._settings = settings
        self._policy = without_residual(policy, residual)
        self._nonces = nonces
        self._capabilities = capabilities
        self._record = Record(means, settings)
        self._deliveries = Deliveries(delivery, self._record, means, settings, notifier)
        self._delivering = self._deliveries.delivering
        self._executor = Executor(means, self._record, self._policy, nonces, residual, capabilities,
                                  self._delivering)
        self._queries = QueryClock(settings)
        self.watches = Watches(means, settings)
        self.carrying = Carrying(self._executor, self._deliveries, self.watches, self._queries, notifier)
        self._beats_until: Callable[[], datetime | None] | None = None

    @property
    def means(self) -> Means:
        """The ports this supervision acts through (a caller that swaps one swaps it for every part)."""
        return self._means

    def tell_gave_up(self, job: JobId, end: SupervisionEnd) -> None:
        """A supervision that gave up is told to notify.command once, when the job asked for it."""
        if end.ending is Ending.GAVE_UP and self._notifier is not None:
            problem = self._notifier.gave_up(job, end.state, end.detail, self._clock.now())
            if problem:
                self._means.progress.note(problem)

    @contextlib.contextmanager
    def rounds(self, job: JobId, lock: JobLock, cancel: Interrupts, *, bound: float | None = None,
               first: tuple[JobState, int] | None = None,
               paced_from: Callable[[], datetime] | None = None, attended: bool = False,
               on_wake: Callable[[bool], None] | None = None,
               beats_until: Callable[[], datetime | None] | None = None) -> Iterator[Rounds]:
        """The supervision of ``job`` as rounds, for the pass loop (``passes.Passes``) that paces it, alone or
        with many jobs in one thread: each ``next``/``send`` runs one loop up to its pause and yields the loop
        and how long it means to pause; the caller waits (``watches.await_change`` / ``watches.resume_now``
        tell it when to send again) and sends whether a stop was requested meanwhile; the ending is the
        generator's return value. The store's and the scheduler's watches live as long as the context.

        ``bound`` (seconds): it ends with what is left after that long even before the outcome
        (``reconcile``); ``first``: the record as the caller just read it (its state and its number of
        events), so that it is not read again.

        ``paced_from``: the moment the caller's pass began. The loop's polls are timed from it instead of
        from the moment this loop ran, and the pause it yields counts from it too, so the jobs of one pass,
        answered by one query, keep asking on the same ticks however long the pass took.

        ``attended``: the caller says the job is supervised from then on (a sweep's attendance), so the loop
        reports supervised-at once, as it begins, and never wakes to refresh it.

        ``on_wake``: called (from a watch's thread) on each wake, True when a watched object changed, False for
        an append; ``beats_until``: the moment by which the caller beats the lock again itself
        (``carrying.carry`` does not beat), so a beat never announces a next loop before it."""
        watches = self.watches
        watches.on_wake = on_wake
        self._beats_until = beats_until
        self.carrying.job = job
        watch = watches.watch_appends(job, cancel)
        watches.append_watch = watch
        try:
            yield self._supervise(job, lock, cancel, bound, watch=watch, first=first,
                                  pace=paced_from, attended=attended)
        finally:
            watches.append_watch = None
            self.carrying.quiet = None
            if watch is not None:
                watch.close()
            watches.unwatch_objects()

    def _supervise(self, job: JobId, lock: JobLock, cancel: Interrupts, bound: float | None, *,
                   watch: AppendWatch | None, first: tuple[JobState, int] | None,
                   pace: Callable[[], datetime] | None, attended: bool = False) -> Rounds:
        first = first or self._record.read_until_giveup(job, cancel)
        if first is None:
            return SupervisionEnd(Ending.GAVE_UP, None, detail=f"the record of {job} stayed unreadable")
        state, known = first
        loop = Loop(state=state, known=known, last_ok=self._clock.monotonic(), lock=lock)
        wait_until: float | None = None
        stop_at = None if bound is None else self._clock.monotonic() + bound
        supervised_at: float | None = None  # monotonic: when supervised-at was last reported
        watching = watch is not None
        must_read = True  # the record was read before the watch began: an append in between is read now
        clock_now = pace if pace is not None else self._clock.now  # the caller's pace, when it sets one
        while True:
            if cancel.pending() is not None:
                return self._drain(job, loop)
            watches = self.watches
            watches.woke = False  # an append from here on wakes the pause below at once
            appended, watches.appended = watches.appended, False
            was_watching, watching = watching, watches.watching(watch, watching)
            # While the store tells of every append (a live watch), the record is read only when one was
            # told of: its requests come in that way, and this loop's own appends are in its state already.
            # A watch that was lost and is back may have missed some: read once then.
            read = self._record.refresh(job, loop) if _read_due(appended, watching, was_watching, must_read) else True
            must_read = not read  # (a read not due leaves it False, as it was)
            self._deliveries.deliver(job, loop)
            self._executor.act(job, loop, cancel)  # the engine's decision: requests answered, steps taken
            ended = self._end_after_acting(job, loop, cancel)
            if ended is not None:
                return ended
            state = loop.state
            ended, wait_until = self._end_in_time(state, stop_at, wait_until)
            if ended is not None:
                return ended
            now = clock_now()
            if self._queries.due(loop, now):
                ended = self._query(job, loop, cancel, now)
                if ended is not None:
                    return ended
            # A loop advances only when it read its record (requests come in that way), was answered by the
            # scheduler and holds nothing unsaved; and its health advances only when the beat is recorded.
            healthy = _advanced(loop, read)
            now_m = self._clock.monotonic()
            supervised_at = self._report_supervised(loop, now, now_m, supervised_at, attended)
            if healthy:
                loop.problem = ""
            # Asleep to the next query only while all is well; anything amiss is looked at every poll.
            to_query = _asleep_to_query(loop, watching, healthy)
            pause = to_next_query = self._queries.until_next(loop, clock_now(), to_query=to_query)
            refresh = self._next_report(supervised_at, attended)
            pause = _soonest(pause, now_m, (wait_until, stop_at, refresh, self._deliveries.due()))
            if healthy:
                healthy = self._beat(lock, loop, now, now_m, pause)
                if loop.lost:
                    return self._lost(loop)
            # Whether the caller may carry this loop to its next query without running it (``carrying``): only
            # a loop whose next step would provably do nothing but ask and find the same answer.
            self.carrying.note(loop, _may_carry(attended=attended, bounded=bound is not None, healthy=healthy,
                                                to_query=to_query, must_read=must_read,
                                                exact=pause == to_next_query))
            if not healthy:
                ended = self._end_unhealthy(lock, loop)
                if ended is not None:
                    return ended
            if (yield loop, pause):  # the pause, waited out by the caller: True when a stop was requested
                return self._drain(job, loop)

    def _end_in_time(self, state: JobState, stop_at: float | None,
                     wait_until: float | None) -> tuple[SupervisionEnd | None, float | None]:
        """How supervision ends for time: its bound reached (``stop_at``), or supervise.wait over since the
        outcome with work still outstanding; and the end of that wait (set at the first loop that needs it)."""
        left = outstanding(state, delivering=self._delivering)
        if stop_at is not None and self._clock.monotonic() >= stop_at:
            return SupervisionEnd(Ending.OUTSTANDING, state, tuple(left) or (Outstanding(0, "no outcome yet"),)), \
                wait_until
        if state.outcome is not None and left:
            now_m = self._clock.monotonic()
            wait_until = now_m + self._settings.wait if wait_until is None else wait_until
            if now_m >= wait_until:
                return SupervisionEnd(Ending.OUTSTANDING, state, tuple(left)), wait_until
        return None, wait_until

    def _query(self, job: JobId, loop: Loop, cancel: Interrupts, now: datetime) -> SupervisionEnd | None:
        """The scheduler asked (unless something is unsaved), and what its answer makes possible done now."""
        loop.asked_at = now
        loop.ask_now = False
        loop.answered = not loop.unsaved and self._executor.observe(job, loop)
        if loop.answered and not loop.lost:
            self._executor.act(job, loop, cancel)
            return self._end_after_acting(job, loop, cancel)
        return self._lost(loop) if loop.lost else None

    def _beat(self, lock: JobLock, loop: Loop, now: datetime, now_m: float, pause: float) -> bool:
        """The loop's health recorded in its lock, announcing the next loop; whether it was (a lost lock is
        ``loop.lost``)."""
        try:
            lock.beat(now, self._announce(loop, self._clock.now() + timedelta(seconds=pause)))
        except LockLost as exc:
            loop.lost = str(exc)
            return False
        except StoreError as exc:
            loop.problem = f"the lock could not record the loop: {exc}"
            return False
        loop.last_ok = now_m
        return True

    def _report_supervised(self, loop: Loop, now: datetime, now_m: float, supervised_at: float | None,
                           attended: bool) -> float:
        """supervised-at told to the pointer at the first loop, then every supervise.supervised_every polls
        (unless the caller tells it, ``attended``); when it was last told (monotonic)."""
        s = self._settings
        if supervised_at is None or (not attended and now_m - supervised_at >= s.supervised_every * s.poll):
            self._means.progress.supervised(loop.state, now)
            return now_m
        return supervised_at

    def _next_report(self, supervised_at: float, attended: bool) -> float | None:
        """When supervised-at is next told (monotonic); None when the caller tells it."""
        s = self._settings
        return None if attended else supervised_at + s.supervised_every * s.poll

    def _end_after_acting(self, job: JobId, loop: Loop, cancel: Interrupts) -> SupervisionEnd | None:
        """How supervision ends once the loop acted: its lock lost, a stop requested, or its record settled."""
        if loop.lost:
            return self._lost(loop)
        if cancel.pending() is not None:
            return self._drain(job, loop)
        if loop.state.settled:
            return SupervisionEnd(Ending.OUTCOME, loop.state)
        return None

    def _end_unhealthy(self, lock: JobLock, loop: Loop) -> SupervisionEnd | None:
        """A loop that did not complete beats nothing, so ask the lock itself: a supervisor cut off from the
        scheduler and the store at once (its login node's network) learns that it lost the job within the
        lock's own detection time, not at giveup. It gives up once it has not advanced for supervise.giveup."""
        try:
            lock.check()
        except LockLost as exc:
            loop.lost = str(exc)
            return self._lost(loop)
        except StoreError as exc:
            loop.problem = loop.problem or f"the lock could not be checked: {exc}"
        if self._clock.monotonic() - loop.last_ok > self._settings.giveup:
            return SupervisionEnd(Ending.GAVE_UP, loop.state, detail=loop.problem or "the loop stopped advancing")
        return None

    def _announce(self, loop: Loop, next_at: datetime) -> datetime:
        """The next loop a beat announces: its own, or later when the caller beats the lock itself by then."""
        until = self._beats_until() if self._beats_until is not None else None
        loop.announced = next_at if until is None or until < next_at else until
        return loop.announced

    def _next_query(self, loop: Loop) -> datetime:
        """When the loop's next query is due (``QueryClock.next_query``)."""
        return self._queries.next_query(loop)

    def carry_out(self, job: JobId, lock: JobLock, cancel: Interrupts) -> tuple[JobState, str]:
        """A command holding the job's lock: answer what is asked, take the steps the user's requests call
        for (never a new attempt: that is supervision's), look once, take what follows. The state after,
        and what could not be done."""
        record = self._means.store.read(job)
        loop = Loop(state=fold(record), known=len(record.events), last_ok=self._clock.monotonic(), lock=lock)
        self._executor.act(job, loop, cancel, commands_only=True)  # requests answered first
        if not loop.lost and self._executor.observe(job, loop):
            self._executor.act(job, loop, cancel, commands_only=True)
        return loop.state, loop.lost or loop.problem

    # ------------------------------------------------------------------ endings

    def _lost(self, loop: Loop) -> SupervisionEnd:
        return SupervisionEnd(Ending.GAVE_UP, loop.state,
                              tuple(outstanding(loop.state, delivering=self._delivering)),
                              detail=f"it lost the job's lock ({loop.lost}); nothing more was sent, and another "
                                     "supervisor may carry the job on")

    def _drain(self, job: JobId, loop: Loop) -> SupervisionEnd:
        """Commit every answer received and every uncertainty; start nothing new."""
        deadline = self._clock.monotonic() + self._settings.drain
        while not self._record.flush(job, loop) and not loop.lost and self._clock.monotonic() < deadline:
            self._clock.sleep(0.2)
        for step in sv.plan(loop.state, self._clock.now(), self._policy):
            if isinstance(step, sv.MarkUnknown):
                self._executor.step(job, loop, step)
        return SupervisionEnd(Ending.DRAINED, loop.state,
                              tuple(outstanding(loop.state, delivering=self._delivering)))


def _soonest(pause: float, now: float, dues: Iterable[float | None]) -> float:
    """``pause`` shortened to the first of ``dues`` (monotonic times; None: not due) that comes sooner."""
    for due in dues:
        if due is not None:
            pause = min(pause, max(due - now, 0.0))
    return pause


def _may_carry(*, attended: bool, bounded: bool, healthy: bool, to_query: bool, must_read: bool,
               exact: bool) -> bool:
    """Whether the caller may carry this loop (``Carrying``), as far as this step tells: attended by a sweep,
    unbounded, healthy, asleep to its next query, nothing to read, its pause exactly to that query."""
    return attended and not bounded and healthy and to_query and not must_read and exact


def _read_due(appended: bool, watching: bool, was_watching: bool, must_read: bool) -> bool:
    """While the store tells of every append (a live watch), the record is read only when one was told of;
    a watch lost, or lost and back (it may have missed some), or a read that failed: read now."""
    return appended or not watching or not was_watching or must_read


def _advanced(loop: Loop, read: bool) -> bool:
    """A loop advances only when it read its record (requests come in that way), was answered by the
    scheduler and holds nothing unsaved."""
    return read and loop.answered and not loop.unsaved


def _asleep_to_query(loop: Loop, watching: bool, healthy: bool) -> bool:
    """Asleep to the next query only while all is well (a live watch, a healthy loop, nothing in doubt)."""
    return watching and healthy and not loop.doubt
