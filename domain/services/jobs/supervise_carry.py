"""Carrying: a caller that paces many loops (a sweep) moves a quiet loop on to its next query without
stepping it, when its step would provably do nothing but ask and find the same answer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from dunscaith.domain.model.jobs import supervision as sv
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import ObjectView, QueryResult
from dunscaith.domain.model.jobs.state import AttemptState, JobState
from dunscaith.domain.services.jobs.notify import Notifier
from dunscaith.domain.services.jobs.supervise_loop import NEVER, Loop
from dunscaith.domain.services.jobs.supervise_pacing import QueryClock, Watches
from dunscaith.domain.services.jobs.supervise_steps import Deliveries, Executor
from dunscaith.ports.job_store import LockLost, StoreError


def _acts_at_once(loop: Loop) -> bool:
    """Something unsaved, in doubt, unsent, lost or asked again, or no whole answer yet: a step would write,
    read or ask at once."""
    return bool(loop.unsaved or loop.doubt or loop.unsent is not None or loop.lost or loop.ask_now
                or not loop.answered)


def _waits_beyond_answer(state: JobState, retrying_delivery: bool, delivering: bool) -> bool:
    """An outcome or settlement (the wait after it has its own deadline), an escalation's delivery retried or
    still to make (retries have their own times), or a request unanswered: a step depends on more than the
    scheduler's answer."""
    return bool(state.outcome is not None or state.settled or retrying_delivery
                or (delivering and any(not e.delivered for e in state.escalations))
                or state.unanswered)


def _attempts_released_and_present(state: JobState) -> bool:
    """Every attempt that ``sv.observe`` does not pass by is released and not absent: observing the same
    objects again adds nothing, whatever the time."""
    for attempt in state.attempts:
        if attempt.order is AttemptState.REFUSED or attempt.ended or attempt.residual:
            continue  # observe passes these by
        if attempt.order is not AttemptState.RELEASED or attempt.absent_since is not None:
            return False
    return True


class Carrying:
    """Whether a loop may be carried, and carrying it (``carry``, ``beat_carried``)."""

    def __init__(self, executor: Executor, deliveries: Deliveries, watches: Watches, clock: QueryClock,
                 notifier: Notifier | None = None) -> None:
        self._notifier = notifier
        self._executor = executor
        self._deliveries = deliveries
        self._watches = watches
        self._clock = clock
        self.quiet: tuple[JobState, tuple[ObjectView, ...]] | None = None  # the loop may be carried
        self._next_at = NEVER  # while the loop may be carried: when its next query is due
        self.job = JobId("")  # the job of the rounds under way

    def note(self, loop: Loop, may: bool) -> None:
        """What ``carry`` reads, as a step ends: the answer last seen with nothing new in it, and the next
        query's time, when the loop ``may`` be carried and its state is ``carriable``."""
        self.quiet = self._executor.seen if may and self._carriable(loop) else None
        if self.quiet is not None:
            self._next_at = self._clock.next_query(loop)  # what to_next_query counts to

    def _carriable(self, loop: Loop) -> bool:
        """Whether, from the state this step ended in, a step at the next query would do nothing but ask the
        scheduler, if the answer were the one last seen with nothing new in it (``Executor.seen``). Each part
        says what a step would otherwise do:

        - nothing unsaved, in doubt, unsent or asked again: the step would write, read or ask at once;
        - the decision for this very state was found empty (``Executor.planned``): ``en.decide`` of a job is a
          function of its state alone as far as steps go (it takes ``now`` but no step depends on time), so
          it is empty again: nothing is sent;
        - the last answer for this very state brought nothing new: ``sv.observe`` of the same objects on the
          same state adds nothing, as long as no attempt is absent (only an absence's deadline,
          ``supervise.absence``, makes it depend on the time) and none is submitting or unknown (an attempt
          to mark, or to look for by name and nonce until its deadline: always stepped);
        - no outcome (the wait after it has its own deadline), no request unanswered, no escalation or notice
          waiting for its delivery (retries have their own times)."""
        state = loop.state
        seen = self._executor.seen
        if (_acts_at_once(loop) or self._executor.planned is not state or seen is None or seen[0] is not state
                or _waits_beyond_answer(state, bool(self._deliveries.retrying), self._deliveries.delivering)
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

        Also stepped: an object its watch saw change, a watch of appends that is not live (the record is then
        read every step), an incomplete answer, and one asked before this loop's last action (``sv.stale``).

        An append told of is not a reason here: the caller was told of it too (``on_wake``), and its next
        pass, which the wake starts at once, asks the store whether this record grew and steps the loop if
        it did (``Passes._woken``). On SQLite every commit wakes every watch: stepping for the wake
        would make one element's commit in the middle of a pass step (and read the record of) every element
        carried after it in that pass, 500 for nothing."""
        quiet = self.quiet
        watches = self._watches
        if quiet is None or quiet[0] is not loop.state or watches.changed or loop.ask_now:
            return None
        due = self._next_at
        if now < due:
            return (due - now).total_seconds()  # a step would only beat (the caller's to do)
        watch = watches.append_watch
        if watch is None or not watch.live():
            return None
        result, objects = answer(self.job)  # asked only here: a loop stepped asks for itself
        if objects != quiet[1] or not result.complete or sv.stale(result, loop.acted_at):
            return None
        loop.asked_at = now
        loop.answered = True
        loop.quiet += 1  # as Executor.observe counts a quiet answer
        loop.last_ok = now_m  # it advanced: read (its watch says nothing was appended), answered, nothing unsaved
        self._next_at = due = self._clock.next_query(loop)
        return max((due - now).total_seconds(), 0.0)

    def beat_carried(self, loop: Loop, at: datetime, next_at: datetime) -> bool:
        """The caller's beat of a loop it carries on (``carry``), announcing ``next_at``; a loop that is not
        carried beats at its own steps (and one that does not advance must not look as if it did), so it is
        left alone. False when the loop must be stepped: its lock is lost (its step then ends it, sending and
        writing nothing more) or the beat failed (its step says why and checks the lock)."""
        if loop.lock is None or self.quiet is None or self.quiet[0] is not loop.state:
            return True
        try:
            loop.lock.beat(at, next_at)
        except LockLost as exc:
            loop.lost = str(exc)
            self.quiet = None
            return False
        except StoreError as exc:
            loop.problem = f"the lock could not record the loop: {exc}"
            self.quiet = None
            return False
        loop.announced = next_at
        return True
