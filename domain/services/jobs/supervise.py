"""Supervise: the loop that takes a job from its record to its outcome, then works off what is left.

Each loop: act on the plan (each step's answer committed before the next request), one batched query,
commit what it says, beat the lock. Nothing is ever sent twice: a create whose answer is lost is
recorded ``unknown`` and only ever found again by its nonce, never resent.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from dunscaith.domain.model.jobs import attempt_needs as needs_
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import supervision as sv
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.kinds import Capabilities, declared_nothing
from dunscaith.domain.model.jobs.objects import ENDED, CreateOutcome, ObjectState, ObjectView, OutputPaths, QueryResult
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.polling import PollBackoff, next_poll, poll_interval_until
from dunscaith.domain.model.jobs.requests import CONFIRMED, REFUSED, confirmation, refusal
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualPolicy, ResidualReason
from dunscaith.domain.model.jobs.settlement import Outstanding, outstanding
from dunscaith.domain.model.jobs.state import AttemptState, JobState, apply, fold
from dunscaith.domain.services.jobs.notify import Notifier
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.escalation_delivery import EscalationDelivery
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_progress import JobProgress
from dunscaith.ports.job_store import AppendWatch, JobLock, JobStore, LockLost, StoreError
from dunscaith.ports.residual import ResidualList
from dunscaith.ports.scheduler import ChangeWatch, Scheduler, SchedulerError, WatchesChanges


@dataclass(frozen=True, slots=True)
class SuperviseSettings:
    poll: float = 10.0  # seconds between loops (and batched queries, while the job is young)
    poll_max: float = 160.0  # the longest interval between queries of a job that has settled in
    drain: float = 30.0  # seconds a drain may take to commit what it holds
    giveup: float = 600.0  # seconds the loop may fail to advance before the supervisor stops (exit 4)
    wait: float = 300.0  # seconds of work on what is outstanding after the outcome (then exit 5)
    supervised_every: int = 10  # supervised-at is reported at most once per this many poll intervals


_SIGNAL_SLICE = 1.0  # seconds: a wait on the scheduler is cut in slices so a signal is seen within one
_NEVER = datetime.max.replace(tzinfo=UTC)


class Ending(StrEnum):
    OUTCOME = "outcome"  # the job has its outcome and nothing is outstanding
    OUTSTANDING = "outstanding"  # supervise.wait ended with work left
    GAVE_UP = "gave-up"  # the loop could not advance for longer than supervise.giveup
    DRAINED = "drained"  # a stop was requested; everything received is committed


@dataclass(frozen=True, slots=True)
class SupervisionEnd:
    ending: Ending
    state: JobState | None
    left: tuple[Outstanding, ...] = ()
    detail: str = ""


def output_paths(scheduler: Scheduler, object_id: ObjectId) -> OutputPaths:
    """Where the released object's output goes, for the record; display only, so never fatal."""
    try:
        return scheduler.output_paths(object_id) or OutputPaths(None, None)
    except Exception:  # a scheduler that could not say: the record just lacks the paths
        return OutputPaths(None, None)


def new_nonce() -> Nonce:
    return Nonce(secrets.token_hex(8))


@dataclass
class Loop:
    state: JobState
    unsaved: list[ev.Event] = field(default_factory=list)  # answers received but not yet durable
    known: int = 0  # events of the record reflected in ``state``
    doubt: bool = False  # an append failed: it may or may not have landed
    unsent: ev.Submitting | None = None  # a create decided but not sent (its "submitting" not yet durable)
    last_ok: float = 0.0
    problem: str = ""
    asked_at: datetime | None = None  # when the scheduler was last queried
    answered: bool = False  # whether that query was answered whole
    lock: JobLock | None = None  # checked right before every request that changes the scheduler's objects
    lost: str = ""  # the lock is gone: nothing more is sent or written by this actor
    quiet: int = 0  # answered queries since the record last changed: the polls back off with it
    acted_at: datetime | None = None  # when this supervisor's last scheduler action returned
    ask_now: bool = False  # the scheduler said an object changed, or an answer was too old: ask at once
    noted: str = ""  # the running object's reason last said in the live view ("disk full: ...")
    announced: datetime | None = None  # the next loop its last beat announced (the lock's health, display only)


# One job's supervision paced by its caller (``Supervisor.rounds``): yields (the loop, seconds to pause), is
# sent whether a stop was requested during the pause, returns the ending.
Rounds = Generator[tuple[Loop, float], bool, SupervisionEnd]


def _acts_at_once(loop: Loop) -> bool:
    """Something unsaved, in doubt, unsent, lost or asked again, or no whole answer yet: a step would write,
    read or ask at once (``Supervisor._carriable``)."""
    return bool(loop.unsaved or loop.doubt or loop.unsent is not None or loop.lost or loop.ask_now
                or not loop.answered)


def _waits_beyond_answer(state: JobState, retrying_delivery: bool, delivering: bool) -> bool:
    """An outcome or settlement (the wait after it has its own deadline), an escalation's delivery retried or
    still to make (retries have their own times), or a request unanswered: a step depends on more than the
    scheduler's answer (``Supervisor._carriable``)."""
    return bool(state.outcome is not None or state.settled or retrying_delivery
                or (delivering and any(not e.delivered for e in state.escalations))
                or state.unanswered)


def _attempts_released_and_present(state: JobState) -> bool:
    """Every attempt that ``sv.observe`` does not pass by is released and not absent: observing the same
    objects again adds nothing, whatever the time (``Supervisor._carriable``)."""
    for attempt in state.attempts:
        if attempt.order is AttemptState.REFUSED or attempt.ended or attempt.residual:
            continue  # observe passes these by
        if attempt.order is not AttemptState.RELEASED or attempt.absent_since is not None:
            return False
    return True


class Supervisor:
    def __init__(self, store: JobStore, scheduler: Scheduler, clock: Clock, crash: CrashPoints,
                 progress: JobProgress, settings: SuperviseSettings, policy: Policy,
                 nonces: Callable[[], Nonce] = new_nonce, delivery: EscalationDelivery | None = None,
                 residual: ResidualList | None = None, capabilities: Capabilities = declared_nothing,
                 notifier: Notifier | None = None) -> None:
        self._store = store
        self._notifier = notifier  # notices to notify.command (domain/services/jobs/notify.py), by the same path
        self._capabilities = capabilities  # a job's adapter -> what its scheduler kind declares it cannot do
        self._scheduler = scheduler
        self._clock = clock
        self._crash = crash
        self._progress = progress
        self._settings = settings
        # without a residual list to move to, an unknown attempt can only wait for the user
        self._policy = policy if residual is not None else replace(policy, residual=ResidualPolicy.MANUAL)
        self._residual = residual
        self._nonces = nonces
        self._delivery = delivery if delivery is not None and delivery.configured else None
        self._delivering = self._delivery is not None
        self._next_delivery: dict[int, tuple[float, float]] = {}  # index -> (next try, current backoff)
        poll = timedelta(seconds=max(settings.poll, 1e-6))
        self._backoff = PollBackoff(base=poll, cap=max(poll, timedelta(seconds=settings.poll_max)))
        self._woke = False  # set (from the store's watch thread) when the record was appended to
        self._appended = False  # the same, kept until the loop reads its record
        self._changed = False  # set (from the scheduler's watch thread) when a watched object may have changed
        self._change_watch: ChangeWatch | None = None
        self._change_watched: list[ObjectId] = []  # the objects that watch is on
        self._no_watch = False  # the scheduler gave no watch for exactly those objects
        # asked once: a runtime Protocol check costs ~15 us, and a sweep's loop would ask it for every element
        self._watcher = scheduler if isinstance(scheduler, WatchesChanges) else None
        # A caller that paces many loops (a sweep): told of each wake from a watch thread (True: a watched object
        # changed; False: an append), so that it looks at the woken loops only, not at every loop each pass.
        self._on_wake: Callable[[bool], None] | None = None
        self._append_watch: AppendWatch | None = None
        self._beats_until: Callable[[], datetime | None] | None = None
        self._planned: JobState | None = None  # the state whose plan was last found empty (nothing to do)
        self._seen: tuple[JobState, tuple[ObjectView, ...]] | None = None  # a quiet answer: nothing new in it
        self._quiet: tuple[JobState, tuple[ObjectView, ...]] | None = None  # the loop may be carried (``carry``)
        self._next_at = _NEVER  # while the loop may be carried: when its next query is due
        self._job = JobId("")  # the job of the rounds under way
        # the poll interval of the job's age, for asks from one moment up to another (the job changed at the first)
        # (and the quiet polls from which it is the delay: fewer are the short polls after a change)
        self._span: tuple[datetime, datetime, datetime, timedelta, int] | None = None

    def run(self, job: JobId, lock: JobLock, cancel: Interrupts, *, bound: float | None = None,
            first: tuple[JobState, int] | None = None) -> SupervisionEnd:
        """Supervise ``job`` while holding its ``lock``, until an ending; never cancels the job.

        With ``bound`` (seconds) it stops with what is left after that long even before the outcome
        (``reconcile``: work carried on for a bounded period, like supervise.wait). ``first``: the record
        as the caller just read it (its state and its number of events), so that it is not read again.

        Where the store tells of appends (``watch_appends``), a request wakes the loop when it is
        committed, so a healthy loop sleeps to its job's next poll instead of reading the record every
        ``supervise.poll``; elsewhere it reads it that often."""
        with self.rounds(job, lock, cancel, bound=bound, first=first) as rounds:
            try:
                loop, pause = next(rounds)
                while True:
                    loop, pause = rounds.send(self._pause(loop, pause, cancel) is not None)
            except StopIteration as done:
                end: SupervisionEnd = done.value
                self.tell_gave_up(job, end)
                return end

    def tell_gave_up(self, job: JobId, end: SupervisionEnd) -> None:
        """A supervision that gave up is told to notify.command once, when the job asked for it."""
        if end.ending is Ending.GAVE_UP and self._notifier is not None:
            problem = self._notifier.gave_up(job, end.state, end.detail, self._clock.now())
            if problem:
                self._progress.note(problem)

    @contextlib.contextmanager
    def rounds(self, job: JobId, lock: JobLock, cancel: Interrupts, *, bound: float | None = None,
               first: tuple[JobState, int] | None = None,
               paced_from: Callable[[], datetime] | None = None, attended: bool = False,
               on_wake: Callable[[bool], None] | None = None,
               beats_until: Callable[[], datetime | None] | None = None) -> Iterator[Rounds]:
        """The supervision of ``job`` as rounds, for a caller that paces many jobs in one thread (a sweep):
        each ``next``/``send`` runs one loop up to its pause and yields the loop and how long it means to
        pause; the caller waits (``await_change`` / ``resume_now`` tell it when to send again) and sends
        whether a stop was requested meanwhile; the ending is the generator's return value. The store's and
        the scheduler's watches live as long as the context.

        ``paced_from``: the moment the caller's pass began. The loop's polls are timed from it instead of
        from the moment this loop ran, and the pause it yields counts from it too, so the jobs of one pass,
        answered by one query, keep asking on the same ticks however long the pass took.

        ``attended``: the caller says the job is supervised from then on (a sweep's attendance), so the loop
        reports supervised-at once, as it begins, and never wakes to refresh it.

        ``on_wake``: called (from a watch's thread) on each wake, True when a watched object changed, False for
        an append; ``beats_until``: the moment by which the caller beats the lock again itself (``carry``
        does not beat), so a beat never announces a next loop before it."""
        self._on_wake = on_wake
        self._beats_until = beats_until
        self._job = job
        watch = self._watch(job, cancel)
        self._append_watch = watch
        try:
            yield self._supervise(job, lock, cancel, bound, watch=watch, first=first,
                                  pace=paced_from, attended=attended)
        finally:
            self._append_watch = None
            self._quiet = None
            if watch is not None:
                watch.close()
            self._unwatch_objects()

    def await_change(self, loop: Loop, cancel: Interrupts) -> None:
        """Before a pause that another caller waits out (``rounds``): watch the loop's started objects, so
        their change wakes ``cancel``'s wait."""
        self._watch_objects(self._watched(loop.state), cancel)

    def resume_now(self, loop: Loop) -> tuple[bool, bool]:
        """After such a wait: whether this loop has something to look at before its pause is over (a
        watched object changed, its record was appended to), and whether it is an object's change, which
        asks the scheduler at once (an append says nothing new of the objects)."""
        changed, woke = self._changed, self._woke
        if changed:
            self._changed = False
            loop.ask_now = True
        return changed or woke, changed

    def _watching(self, watch: AppendWatch | None, was: bool) -> bool:
        """Whether appends wake the loop now; a change is said in the live view (a watch of a server's
        notices is lost with its connection, and made anew)."""
        now = watch is not None and watch.live()
        if now != was and watch is not None:
            self._progress.note(
                "the store's notice of appends is back: requests are answered as soon as they are committed"
                if now else
                f"the store's notice of appends is lost (reconnecting): requests are answered within "
                f"supervise.poll ({self._settings.poll:g} s) meanwhile")
        return now

    def _watch(self, job: JobId, cancel: Interrupts) -> AppendWatch | None:
        if self._settings.poll <= 0:
            return None

        def woken() -> None:
            self._appended = True
            self._woke = True
            if self._on_wake is not None:
                self._on_wake(False)
            cancel.wake()

        try:
            return self._store.watch_appends(job, woken)
        except Exception:  # a watch only saves reads: without one the record is read every poll interval
            return None

    def _supervise(self, job: JobId, lock: JobLock, cancel: Interrupts, bound: float | None, *,
                   watch: AppendWatch | None, first: tuple[JobState, int] | None,
                   pace: Callable[[], datetime] | None, attended: bool = False) -> Rounds:
        first = first or self._read_until_giveup(job, cancel)
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
            self._woke = False  # an append from here on wakes the pause below at once
            appended, self._appended = self._appended, False
            was_watching, watching = watching, self._watching(watch, watching)
            # While the store tells of every append (a live watch), the record is read only when one was
            # told of: its requests come in that way, and this loop's own appends are in its state already.
            # A watch that was lost and is back may have missed some: read once then.
            read = self._refresh(job, loop) if _read_due(appended, watching, was_watching, must_read) else True
            must_read = not read  # (a read not due leaves it False, as it was)
            self._answer(job, loop)
            self._deliver(job, loop)
            self._act(job, loop, cancel)
            ended = self._end_after_acting(job, loop, cancel)
            if ended is not None:
                return ended
            state = loop.state
            ended, wait_until = self._end_in_time(state, stop_at, wait_until)
            if ended is not None:
                return ended
            now = clock_now()
            if self._query_due(loop, now):
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
            pause = to_next_query = self._until_next(loop, clock_now(), to_query=to_query)
            refresh = self._next_report(supervised_at, attended)
            pause = _soonest(pause, now_m, (wait_until, stop_at, refresh, self._delivery_due()))
            if healthy:
                healthy = self._beat(lock, loop, now, now_m, pause)
                if loop.lost:
                    return self._lost(loop)
            # Whether the caller may carry this loop to its next query without running it (``carry``): only a
            # loop whose next step would provably do nothing but ask and find the same answer.
            self._note_quiet(loop, self._may_carry(loop, attended=attended, bounded=bound is not None,
                                                   healthy=healthy, to_query=to_query, must_read=must_read,
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
        loop.answered = not loop.unsaved and self._observe(job, loop)
        if loop.answered and not loop.lost:
            self._act(job, loop, cancel)
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
            self._progress.supervised(loop.state, now)
            return now_m
        return supervised_at

    def _may_carry(self, loop: Loop, *, attended: bool, bounded: bool, healthy: bool, to_query: bool,
                   must_read: bool, exact: bool) -> bool:
        """Whether the caller may carry this loop to its next query without running it (``carry``): only a
        loop whose next step would provably do nothing but ask and find the same answer."""
        return (attended and not bounded and healthy and to_query and not must_read and exact
                and self._carriable(loop))

    def _next_report(self, supervised_at: float, attended: bool) -> float | None:
        """When supervised-at is next told (monotonic); None when the caller tells it."""
        s = self._settings
        return None if attended else supervised_at + s.supervised_every * s.poll

    def _note_quiet(self, loop: Loop, quiet: bool) -> None:
        """What ``carry`` reads: the answer last seen with nothing new in it, and the next query's time."""
        self._quiet = self._seen if quiet else None
        if self._quiet is not None:
            self._next_at = self._next_query(loop)  # what to_next_query counts to

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

    def _carriable(self, loop: Loop) -> bool:
        """Whether, from the state this step ended in, a step at the next query would do nothing but ask the
        scheduler, if the answer were the one last seen with nothing new in it (``_seen``). Each part says
        what a step would otherwise do:

        - nothing unsaved, in doubt, unsent or asked again: the step would write, read or ask at once;
        - the plan for this very state was found empty (``_planned``): ``sv.plan`` is a function of the state
          alone (it takes ``now`` but no step of it depends on time), so it is empty again: nothing is sent;
        - the last answer for this very state brought nothing new (``_seen``): ``sv.observe`` of the same
          objects on the same state adds nothing, as long as no attempt is absent (only an absence's
          deadline, ``supervise.absence``, makes it depend on the time) and none is submitting or unknown
          (an attempt to mark, or to look for by name and nonce until its deadline: always stepped);
        - no outcome (the wait after it has its own deadline), no request unanswered, no escalation waiting
          for its delivery (retries have their own times)."""
        state = loop.state
        if (_acts_at_once(loop) or self._planned is not state or self._seen is None or self._seen[0] is not state
                or _waits_beyond_answer(state, bool(self._next_delivery), self._delivering)
                or (self._notifier is not None and self._notifier.waiting(state))):
            return False
        return _attempts_released_and_present(state)

    def carry(self, loop: Loop, now: datetime, now_m: float,
              answer: Callable[[JobId], tuple[QueryResult, tuple[ObjectView, ...]]]) -> float | None:
        """A caller that paces many loops (a sweep), at this loop's next query: when its step would provably do
        nothing (``_carriable``, judged as the last step ended) and the round's ``answer`` gives its job the
        very objects it last found nothing new in, this counts the answered poll as the step would (the
        polls back off) without running it, and says the seconds to the next query; None when the loop must
        be stepped. Nothing is sent, written or beaten here: the caller beats the lock itself (``beats_until``).

        Also stepped: a record appended to (``_appended``, until the caller found it did not grow), an object
        its watch saw change, a watch of appends that is not live (the record is then read every step), an
        incomplete answer, and one asked before this loop's last action (``sv.stale``)."""
        quiet = self._quiet
        if quiet is None or quiet[0] is not loop.state or self._appended or self._changed or loop.ask_now:
            return None
        # _query_due and _until_next(to_query=True), for a loop answered whole and not asked again at once
        due = self._next_at
        if now < due:
            return (due - now).total_seconds()  # a step would only beat (the caller's to do)
        watch = self._append_watch
        if watch is None or not watch.live():
            return None
        result, objects = answer(self._job)  # asked only here: a loop stepped asks for itself
        if objects != quiet[1] or not result.complete or sv.stale(result, loop.acted_at):
            return None
        loop.asked_at = now
        loop.answered = True
        loop.quiet += 1  # as _observe counts a quiet answer
        loop.last_ok = now_m  # it advanced: read (its watch says nothing was appended), answered, nothing unsaved
        self._next_at = due = self._next_query(loop)
        return max((due - now).total_seconds(), 0.0)

    def appends_seen(self) -> None:
        """The caller is about to ask the store whether this job's record grew (``JobStore.last_seqs``): the
        appends told of until now are answered by that question. An append after it wakes again."""
        self._appended = False
        self._woke = False

    def record_grew(self) -> None:
        """The record grew past what this loop knows: its next step reads it."""
        self._appended = True

    def beat_carried(self, loop: Loop, at: datetime, next_at: datetime) -> bool:
        """The caller's beat of a loop it carries on (``carry``), announcing ``next_at``; a loop that is not
        carried beats at its own steps (and one that does not advance must not look as if it did), so it is
        left alone. False when the loop must be stepped: its lock is lost (its step then ends it, sending and
        writing nothing more) or the beat failed (its step says why and checks the lock)."""
        if loop.lock is None or self._quiet is None or self._quiet[0] is not loop.state:
            return True
        try:
            loop.lock.beat(at, next_at)
        except LockLost as exc:
            loop.lost = str(exc)
            self._quiet = None
            return False
        except StoreError as exc:
            loop.problem = f"the lock could not record the loop: {exc}"
            self._quiet = None
            return False
        loop.announced = next_at
        return True

    def carry_out(self, job: JobId, lock: JobLock, cancel: Interrupts) -> tuple[JobState, str]:
        """A command holding the job's lock: answer what is asked, take the steps the user's requests call
        for (never a new attempt: that is supervision's), look once, take what follows. The state after,
        and what could not be done."""
        record = self._store.read(job)
        loop = Loop(state=fold(record), known=len(record.events), last_ok=self._clock.monotonic(), lock=lock)
        self._answer(job, loop)
        self._act(job, loop, cancel, commands_only=True)
        if not loop.lost and self._observe(job, loop):
            self._act(job, loop, cancel, commands_only=True)
        return loop.state, loop.lost or loop.problem

    # ------------------------------------------------------------------ requests

    def _refresh(self, job: JobId, loop: Loop) -> bool:
        """Commands append requests to the record while this supervisor holds the lock: read them in.
        False when the record could not be read (a loop that cannot read it does not advance)."""
        if loop.unsaved or loop.doubt:
            return True  # nothing is read until they are settled: the loop is not healthy meanwhile anyway
        try:
            record = self._store.read(job)
        except StoreError as exc:
            loop.problem = f"the record could not be read: {exc}"
            return False
        if len(record.events) != loop.known:
            loop.state = fold(record)
            loop.known = len(record.events)
            loop.quiet = 0  # a request came in: what it asks for is looked at soon
        return True

    def _answer(self, job: JobId, loop: Loop) -> None:
        """Each request is answered once: its answer is committed, and a confirmed one becomes the job's."""
        for req in loop.state.unanswered:
            reason = refusal(loop.state, req.action, self._capabilities(loop.state.spec.adapter))
            answer = (ev.Answered(req.id, REFUSED, reason) if reason is not None
                      else ev.Answered(req.id, CONFIRMED, confirmation(loop.state, req.action)))
            if not self._commit(job, loop, answer, "request-answered"):
                return

    # ------------------------------------------------------------------ escalations

    def _deliver(self, job: JobId, loop: Loop) -> None:
        """Hand undelivered escalations to the configured command; a failure is retried later, backing
        off, and never holds up supervision."""
        if self._delivery is None or loop.unsaved:
            self._notify(job, loop)
            return
        now = self._clock.monotonic()
        for index, esc in enumerate(loop.state.escalations):
            if esc.delivered:
                continue
            due, backoff = self._next_delivery.get(index, (now, max(self._settings.poll, 1.0)))
            if now < due:
                continue
            try:
                self._delivery.deliver(job, index, esc)
            except Exception as exc:  # whatever the command did, the escalation stays undelivered
                self._next_delivery[index] = (now + backoff, min(backoff * 2, 600.0))
                loop.problem = f"escalation {index + 1} not delivered: {exc}"
                continue
            self._next_delivery.pop(index, None)
            self._commit(job, loop, ev.Delivered(index), "delivery-committed")
        self._notify(job, loop)

    def _notify(self, job: JobId, loop: Loop) -> None:
        """The notices the record owes, handed to notify.command as escalations are (domain/services/jobs/notify.py)."""
        if self._notifier is None or loop.unsaved:
            return
        problem = self._notifier.deliver_owed(loop.state, lambda event: self._commit(job, loop, event,
                                                                                       "notice-committed"))
        if problem:
            loop.problem = problem
            self._progress.note(problem)  # said at each failed try (they back off), the job goes on meanwhile

    # ------------------------------------------------------------------ pacing

    def _query_due(self, loop: Loop, now: datetime) -> bool:
        """One batched query per interval: short after a change (0.25 s, doubling), then growing with
        the time since the job last changed (domain/model/jobs/polling.py)."""
        if loop.asked_at is None or not loop.answered or loop.ask_now or self._settings.poll <= 0:
            return True
        return now >= self._next_query(loop)

    def _next_query(self, loop: Loop) -> datetime:
        asked = loop.asked_at
        assert asked is not None
        state = loop.state
        since = state.updated_at or state.recorded_at
        span = self._span
        if span is not None and loop.quiet >= span[4] and span[0] == since and span[1] <= asked < span[2]:
            return next_poll(asked, span[3])  # settled in, the interval of its age as last worked out
        backoff = self._backoff
        delay = backoff.first * (1 << min(max(loop.quiet, 0), 40))
        if delay >= backoff.base:  # settled in: the interval of its age, as poll_delay says
            interval, longer_at = poll_interval_until(asked - since, backoff)
            self._span = (since, asked, since + longer_at if longer_at is not None else _NEVER, interval, loop.quiet)
            delay = interval
        return next_poll(asked, delay)

    def _until_next(self, loop: Loop, now: datetime, *, to_query: bool = False) -> float:
        """Seconds to the next query; unless ``to_query`` (appends wake the loop, and all is well), at
        most to the next multiple of supervise.poll, so the record is read for requests that often.
        Ticks count from the epoch: every supervisor of a host wakes together, so one coalesced query
        can answer them all."""
        if self._settings.poll <= 0:
            return 0.0
        tick = next_poll(now, timedelta(seconds=self._settings.poll))
        if loop.asked_at is not None and (not loop.answered and loop.ask_now):
            tick = min(tick, now + self._backoff.first)  # an answer older than the last action: ask again soon
        elif loop.asked_at is not None and loop.answered:
            tick = self._next_query(loop) if to_query else min(tick, self._next_query(loop))
        return max((tick - now).total_seconds(), 0.0)

    def _delivery_due(self) -> float | None:
        """When the next retry of an undelivered escalation is due (monotonic), if one is waiting."""
        escalation = min((due for due, _ in self._next_delivery.values()), default=None) if self._delivering else None
        notice = self._notifier.next_due() if self._notifier is not None else None
        return min((d for d in (escalation, notice) if d is not None), default=None)

    def _pause(self, loop: Loop, seconds: float, cancel: Interrupts) -> str | None:
        """Sleep until the next query, waking early when the scheduler says a started object changed
        (the local scheduler: its outcome written, its worker gone), a request is appended, or a signal
        arrives. A scheduler that watches its objects (``WatchesChanges``) wakes the one wait on
        ``cancel`` with the store's watch and the signals; any other is asked in slices."""
        if self._watch_objects(self._watched(loop.state), cancel):
            if not self._changed and seconds > 0:
                cancel.wait(seconds)
            if self._changed:
                self._changed = False
                loop.ask_now = True
            return cancel.pending()
        watched = self._watched(loop.state) if seconds > 0 else []
        end = self._clock.monotonic() + seconds
        while watched:
            left = end - self._clock.monotonic()
            if left <= 0 or self._woke:
                return cancel.pending()
            step = min(left, _SIGNAL_SLICE)
            began = self._clock.monotonic()
            if self._scheduler.wait_for_change(watched, step):
                loop.ask_now = True
                return cancel.pending()
            if cancel.pending() is not None:
                return cancel.pending()
            if self._clock.monotonic() - began < step / 2:
                break  # this scheduler cannot tell: sleep to the next query
        return cancel.wait(max(end - self._clock.monotonic(), 0.0))

    def _watch_objects(self, watched: list[ObjectId], cancel: Interrupts) -> bool:
        """Whether a watch of the scheduler's on exactly ``watched`` is in place (made anew when they change)."""
        if watched == self._change_watched and (self._change_watch is not None or self._no_watch):
            return self._change_watch is not None  # in place, or the scheduler said it has none for these
        self._unwatch_objects()
        if not watched or self._watcher is None:
            return False

        def changed() -> None:
            self._changed = True
            if self._on_wake is not None:
                self._on_wake(True)
            cancel.wake()

        try:
            self._change_watch = self._watcher.watch_changes(watched, changed)
        except Exception:  # a watch only saves waiting: without one the scheduler is asked in slices
            self._change_watch = None
            return False  # asked again next time: a watch that failed may work then
        # None: this scheduler gives no watch for these objects; not asked again until they change (a
        # sweep's loop asks every element before every pause)
        self._no_watch = self._change_watch is None
        self._change_watched = list(watched)
        return self._change_watch is not None

    def _unwatch_objects(self) -> None:
        if self._change_watch is not None:
            try:
                self._change_watch.close()
            except Exception:  # closing a watch cannot fail the supervision
                pass
        self._change_watch = None
        self._change_watched = []
        self._no_watch = False

    @staticmethod
    def _watched(state: JobState) -> list[ObjectId]:
        """The released objects that have not ended: the ones whose change is worth waking for."""
        return [a.object_id for a in state.attempts
                if a.object_id is not None and a.order is AttemptState.RELEASED and a.object_state not in ENDED
                and a.object_state is not ObjectState.HELD]

    # ------------------------------------------------------------------ steps

    def _act(self, job: JobId, loop: Loop, cancel: Interrupts, *, commands_only: bool = False) -> None:
        """Take the planned steps until none is left, a step fails, or a stop is requested."""
        for _ in range(100):  # a plan always moves the state on; the bound only guards a bug
            if not self._flush(job, loop) or not self._send_if_durable(job, loop):
                return
            sending = loop.unsent.attempt if loop.unsent is not None else None
            steps = sv.plan(loop.state, self._clock.now(), self._policy, sending, delivering=self._delivering)
            if commands_only:  # a command makes nothing new and releases only what the user asked to
                steps = [st for st in steps if not isinstance(st, sv.StartAttempt)
                         and not (isinstance(st, sv.Release) and not loop.state.release_wanted)]
            elif not steps and sending is None:
                self._planned = loop.state  # nothing to do in this state (``_carriable``)
            if not steps:
                return
            for step in steps:
                if cancel.pending() is not None or not self._step(job, loop, step):
                    return


    def _step(self, job: JobId, loop: Loop, step: sv.Step) -> bool:
        match step:
            case sv.StartAttempt(attempt=n, reason=why, needs=needs, cause=cause):
                self._crash.reached("start-decided")  # the last end is durable, the next attempt's intent not yet
                return self._create(job, loop, needs_.submitting(n, self._nonces(), loop.state.spec, needs, cause, why))
            case sv.MarkUnknown(attempt=n):
                return self._commit(job, loop, ev.Unknown(n, "the supervisor that sent it stopped before "
                                                             "reading the reply"), "unknown-committed")
            case sv.Release(attempt=n, object_id=oid):
                return self._release(job, loop, n, oid)
            case sv.Cancel(attempt=n, object_id=oid):
                return self._cancel(job, loop, n, oid)
            case sv.MoveToResidual(attempt=n, reason=reason):
                return self._move_to_residual(job, loop, n, reason)
            case sv.Requeue(attempt=n, object_id=oid):
                return self._requeue(job, loop, n, oid)
            case sv.ReportUncertain(attempt=n):
                return self._commit(job, loop, ev.ActionFailed(
                    "requeue", n, f"attempt {n}: the requeue's sender stopped before its answer: it may or may "
                                  "not have reached the scheduler, and is never sent again; look at `status` and "
                                  "requeue again if it did not"), "uncertain-committed")
            case sv.Hold(attempt=n, object_id=oid):
                return self._hold(job, loop, n, oid)
            case sv.Escalate(reason=reason, attempt=n, detail=detail):
                return self._commit(job, loop, ev.Escalated(str(reason), n, detail), "escalation-committed")
            case sv.Conclude(outcome=outcome):
                return self._commit(job, loop, ev.OutcomeReached(str(outcome.kind), outcome.detail),
                                    "outcome-committed")
            case sv.Settle():
                return self._commit(job, loop, ev.Settled(), "settled-committed")
        raise AssertionError(f"unplanned step {step!r}")

    def _release(self, job: JobId, loop: Loop, n: int, oid: ObjectId) -> bool:
        """Sent under the lock; a refusal is this step's problem and nothing is committed."""
        sent, refused = self._ask_scheduler(loop, self._scheduler.release, oid)
        if refused is not None:
            loop.problem = f"release of {oid} failed: {refused}"
        if not sent or refused is not None:
            return False
        self._crash.reached("release-sent")
        paths = output_paths(self._scheduler, oid)
        return self._commit(job, loop, ev.Released(n, oid, paths.stdout, paths.stderr), "release-committed")

    def _cancel(self, job: JobId, loop: Loop, n: int, oid: ObjectId) -> bool:
        sent, refused = self._ask_scheduler(loop, self._scheduler.cancel, oid)
        if refused is not None:
            loop.problem = f"cancel of {oid} failed: {refused}"
        if not sent or refused is not None:
            return False
        return self._commit(job, loop, ev.Cancelling(n, oid), "cancel-committed")

    def _requeue(self, job: JobId, loop: Loop, n: int, oid: ObjectId) -> bool:
        """"Requeueing" is durable before the request goes out: a crash after it reports the requeue uncertain
        (``sv.ReportUncertain``) and never sends it again."""
        if not self._commit(job, loop, ev.Requeueing(n, oid), "requeueing-committed"):
            return False  # not durable: nothing is sent
        sent, refused = self._ask_scheduler(loop, self._scheduler.requeue, oid)
        if not sent:
            return False
        if refused is not None:
            return self._commit(job, loop, ev.ActionFailed("requeue", n, f"requeue of {oid}: {refused}"),
                                "requeue-failed-committed")
        return self._commit(job, loop, ev.Requeued(n, oid), "requeued-committed")

    def _hold(self, job: JobId, loop: Loop, n: int, oid: ObjectId) -> bool:
        sent, refused = self._ask_scheduler(loop, self._scheduler.hold, oid)
        if not sent:
            return False
        if refused is not None:  # it started meanwhile, or the scheduler refused: reported
            return self._commit(job, loop, ev.ActionFailed("hold", n, f"hold of {oid}: {refused}"),
                                "hold-failed-committed")
        return self._commit(job, loop, ev.HeldByUser(n, oid), "hold-committed")

    def _ask_scheduler(self, loop: Loop, request: Callable[[ObjectId], None],
                       oid: ObjectId) -> tuple[bool, SchedulerError | None]:
        """One request that changes an object, sent only while the lock is still ours: (False, None) when it
        is not (nothing sent); else (True, the scheduler's refusal or None). Either way the loop has acted."""
        if not self._still_held(loop):
            return False, None
        try:
            request(oid)
        except SchedulerError as exc:
            return True, exc
        finally:
            self._acted(loop)
        return True, None

    def _move_to_residual(self, job: JobId, loop: Loop, n: int, reason: ResidualReason) -> bool:
        """The entry is durable in the list before the record says the attempt moved: a crash between
        the two adds it again (the first one stands) and then commits."""
        assert self._residual is not None
        spec = loop.state.spec
        entry = ResidualEntry(job, spec.cluster, spec.adapter, reason, n,
                              loop.state.attempt(n).nonce, self._clock.now())
        try:
            self._residual.add(entry)
        except Exception as exc:  # a home that refuses the write: the attempt stays outstanding
            loop.problem = f"attempt {n} not moved to the residual list: {exc}"
            return False
        self._crash.reached("residual-added")
        return self._commit(job, loop, ev.MovedToResidual(n, str(reason)), "residual-committed")

    def _create(self, job: JobId, loop: Loop, submitting: ev.Submitting) -> bool:
        loop.unsent = submitting  # the request goes out only once this is durable, and then only once
        if not self._commit(job, loop, submitting, "submitting-committed"):
            return False  # kept: once it is durable (or found to be), the request is sent then
        return self._send(job, loop, submitting)

    def _send(self, job: JobId, loop: Loop, submitting: ev.Submitting) -> bool:
        if not self._still_held(loop):
            return False  # its "submitting" is durable: whoever holds the job now finds it unanswered
        loop.unsent = None
        n = submitting.attempt
        try:
            answer = self._scheduler.create_held(needs_.object_spec(loop.state.spec, submitting))
            event: ev.Event
            if answer.outcome is CreateOutcome.CREATED and answer.object_id is not None:
                event = ev.Created(n, answer.object_id)
            elif answer.outcome is CreateOutcome.REFUSED:
                event = ev.Refused(n, answer.detail or "refused")
            else:
                event = ev.Unknown(n, answer.detail or "no reply")
        except Exception as exc:  # whatever went wrong, the request may have gone out: unknown, never resent
            event = ev.Unknown(n, f"{type(exc).__name__}: {exc}")
        finally:
            self._acted(loop)
        self._crash.reached("create-answered")
        return self._commit(job, loop, event, "answer-committed")

    def _send_if_durable(self, job: JobId, loop: Loop) -> bool:
        """A create whose "submitting" became durable late (the store failed first): send it now."""
        pending = loop.unsent
        if pending is None:
            return True
        recorded = loop.state.by_nonce(pending.nonce)
        if recorded is None or recorded.order is not AttemptState.SUBMITTING:
            return True  # not durable yet: nothing is sent
        return self._send(job, loop, pending)

    def _acted(self, loop: Loop) -> None:
        """An action just returned (or failed): no answer asked before now may become an observation."""
        loop.acted_at = self._clock.now()

    def _observe(self, job: JobId, loop: Loop) -> bool:
        try:
            # confirm_absent: a purged object must still say how it ended
            result = self._scheduler.query([job], confirm_absent=True)
        except Exception as exc:  # a query makes nothing; its failure only means we learned nothing
            loop.problem = f"the scheduler did not answer: {type(exc).__name__}: {exc}"
            return False
        if sv.stale(result, loop.acted_at):
            loop.ask_now = True  # a shared answer asked before this supervisor's last action: ask again
            return False
        if not result.complete:
            loop.problem = f"the scheduler answered in part: {result.detail}"
        events = sv.observe(loop.state, result, self._clock.now(), self._policy)
        # an answer that brought nothing new, and the state it was judged on (``_carriable``)
        self._seen = (loop.state, result.objects) if not events and result.complete else None
        self._note_running_reason(loop, result)  # before the commit: on a full disk the commit may wait
        for event in events:
            if not self._commit(job, loop, event, "observation-committed"):
                return False
        if not events and result.complete:
            loop.quiet += 1  # nothing changed: the next poll waits twice as long (to the cap)
        return result.complete

    def _note_running_reason(self, loop: Loop, result: QueryResult) -> None:
        """A running object the scheduler gives a reason for (the local scheduler's "disk full: the worker
        ended with exit code 0; its outcome is kept ...") is said in the live view once, and again when it
        changes, whether or not its observation can be recorded now (the record may be on that full disk)."""
        current = loop.state.current
        if current is None or current.object_id is None:
            return
        for view in result.objects:
            if view.object_id != current.object_id or view.state is not ObjectState.RUNNING:
                continue
            reason = view.reason if view.reason not in ("", "None") else ""
            if reason != loop.noted:
                loop.noted = reason
                if reason:
                    self._progress.note(f"attempt {current.number}: {view.object_id} is running: {reason}")

    # ------------------------------------------------------------------ the lock

    def _still_held(self, loop: Loop) -> bool:
        """Right before a request that changes the scheduler's objects: is the lock still ours? A lost
        lock means another actor may act on the job now; this one sends nothing more."""
        if loop.lost:
            return False
        if loop.lock is None:
            return True
        try:
            loop.lock.check()
        except LockLost as exc:
            loop.lost = str(exc)
            return False
        return True

    def _lost(self, loop: Loop) -> SupervisionEnd:
        return SupervisionEnd(Ending.GAVE_UP, loop.state,
                              tuple(outstanding(loop.state, delivering=self._delivering)),
                              detail=f"it lost the job's lock ({loop.lost}); nothing more was sent, and another "
                                     "supervisor may carry the job on")

    # ------------------------------------------------------------------ the record

    def _commit(self, job: JobId, loop: Loop, event: ev.Event, point: str) -> bool:
        """Make ``event`` durable; on a store failure keep it to commit later, before anything else."""
        loop.unsaved.append(event)
        ok = self._flush(job, loop)
        if ok:
            self._crash.reached(point)
        return ok

    def _flush(self, job: JobId, loop: Loop) -> bool:
        if loop.lost:
            return False  # a write now could only fail (its session is gone) or race the new holder
        if loop.doubt and not self._settle_doubt(job, loop):
            return False
        while loop.unsaved:
            event = loop.unsaved[0]
            now = self._clock.now()
            try:
                kind, data = ev.encode(event)
                self._store.append(job, now, kind, data)
            except LockLost as exc:
                loop.lost = str(exc)
                loop.doubt = True
                return False
            except StoreError as exc:
                loop.problem = f"the record could not be written: {exc}"
                loop.doubt = True  # the append may have landed all the same: read before trying again
                return False
            loop.known += 1
            loop.unsaved.pop(0)
            loop.state = apply(loop.state, event, now)
            loop.quiet = 0  # a change: the polls start short again
            self._progress.committed(loop.state, event)
        return True

    def _settle_doubt(self, job: JobId, loop: Loop) -> bool:
        """After a failed append, learn from the record which of the unsaved events did land, so none
        is written twice."""
        try:
            record = self._store.read(job)
        except StoreError as exc:
            loop.problem = f"the record could not be read: {exc}"
            return False
        # only this actor appends anything but requests while it holds the lock: count what landed of its own
        landed = sum(1 for line in record.events[loop.known:] if line.kind != ev.Requested.KIND)
        if len(record.events) != loop.known:
            loop.state = fold(record)
            for event in loop.unsaved[:landed]:
                self._progress.committed(loop.state, event)
            del loop.unsaved[:landed]
            loop.known = len(record.events)
        loop.doubt = False
        return True

    def _read_until_giveup(self, job: JobId, cancel: Interrupts) -> tuple[JobState, int] | None:
        started = self._clock.monotonic()
        while True:
            try:
                record = self._store.read(job)
                return fold(record), len(record.events)
            except StoreError:
                if (self._clock.monotonic() - started > self._settings.giveup
                        or cancel.wait(self._settings.poll) is not None):
                    return None

    def _drain(self, job: JobId, loop: Loop) -> SupervisionEnd:
        """Commit every answer received and every uncertainty; start nothing new."""
        deadline = self._clock.monotonic() + self._settings.drain
        while not self._flush(job, loop) and not loop.lost and self._clock.monotonic() < deadline:
            self._clock.sleep(0.2)
        for step in sv.plan(loop.state, self._clock.now(), self._policy):
            if isinstance(step, sv.MarkUnknown):
                self._step(job, loop, step)
        return SupervisionEnd(Ending.DRAINED, loop.state,
                              tuple(outstanding(loop.state, delivering=self._delivering)))


def _soonest(pause: float, now: float, dues: Iterable[float | None]) -> float:
    """``pause`` shortened to the first of ``dues`` (monotonic times; None: not due) that comes sooner."""
    for due in dues:
        if due is not None:
            pause = min(pause, max(due - now, 0.0))
    return pause


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
