"""When one supervision loop wakes: its query's time (``QueryClock``, the engine's pacing with the interval of
the job's age kept between asks) and what wakes it early (``Watches``: the store's notice of appends, the
scheduler's watch of the started objects, a signal)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from dunscaith.domain.model.jobs import engine as en
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState
from dunscaith.domain.model.jobs.polling import next_poll, poll_interval_until
from dunscaith.domain.model.jobs.state import AttemptState, JobState
from dunscaith.domain.services.jobs.supervise_loop import NEVER, Loop, Means, SuperviseSettings
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_store import AppendWatch
from dunscaith.ports.scheduler import ChangeWatch, WatchesChanges


class QueryClock:
    """The engine's pacing of one loop (``en.query_due``, ``en.wake_at``), with the interval of the job's
    age worked out once for a span of asks (a sweep's loop times every element every round)."""

    def __init__(self, settings: SuperviseSettings) -> None:
        self.pacing = en.Pacing.of(settings.poll, settings.poll_max)
        self._off = settings.poll <= 0
        # the poll interval of the job's age, for asks from one moment up to another (the job changed at the first)
        # (and the quiet polls from which it is the delay: fewer are the short polls after a change)
        self._span: tuple[datetime, datetime, datetime, timedelta, int] | None = None

    def due(self, loop: Loop, now: datetime) -> bool:
        """One batched query per interval: short after a change (0.25 s, doubling), then growing with
        the time since the job last changed (domain/model/jobs/polling.py)."""
        if loop.asked_at is None or not loop.answered or loop.ask_now or self._off:
            return True
        return now >= self.next_query(loop)

    def next_query(self, loop: Loop) -> datetime:
        """``en.next_query`` of the loop; the interval of its age kept until the age reaches a longer one."""
        asked = loop.asked_at
        assert asked is not None
        state = loop.state
        since = state.updated_at or state.recorded_at
        span = self._span
        if span is not None and loop.quiet >= span[4] and span[0] == since and span[1] <= asked < span[2]:
            return next_poll(asked, span[3])  # settled in, the interval of its age as last worked out
        backoff = self.pacing.backoff
        delay = backoff.first * (1 << min(max(loop.quiet, 0), 40))
        if delay >= backoff.base:  # settled in: the interval of its age, as poll_delay says
            interval, longer_at = poll_interval_until(asked - since, backoff)
            self._span = (since, asked, since + longer_at if longer_at is not None else NEVER, interval, loop.quiet)
            delay = interval
        return next_poll(asked, delay)

    def until_next(self, loop: Loop, now: datetime, *, to_query: bool = False) -> float:
        """Seconds to the loop's wake (``en.wake_at``): its next query; unless ``to_query`` (appends wake the
        loop, and all is well), at most to the next multiple of supervise.poll, so the record is read for
        requests that often. Ticks count from the epoch: every supervisor of a host wakes together, so one
        coalesced query can answer them all."""
        if self._off:
            return 0.0
        at = self.next_query(loop) if loop.asked_at is not None and loop.answered else None
        view = en.JobView(JobId(""), loop.state, asked_at=loop.asked_at, answered=loop.answered,
                          ask_now=loop.ask_now, quiet=loop.quiet)
        return max((en.wake_at(view, now, self.pacing, to_query=to_query, at=at) - now).total_seconds(), 0.0)


class Watches:
    """What wakes one loop before its time, told from the watches' threads: an append to its record
    (``appended``, ``woke``), a change of one of its started objects (``changed``)."""

    def __init__(self, means: Means, settings: SuperviseSettings) -> None:
        self._means = means
        self._settings = settings
        self.woke = False  # set (from the store's watch thread) when the record was appended to
        self.appended = False  # the same, kept until the loop reads its record
        self.changed = False  # set (from the scheduler's watch thread) when a watched object may have changed
        self._change_watch: ChangeWatch | None = None
        self._change_watched: list[ObjectId] = []  # the objects that watch is on
        self._no_watch = False  # the scheduler gave no watch for exactly those objects
        # asked once: a runtime Protocol check costs ~15 us, and a sweep's loop would ask it for every element
        scheduler = means.scheduler
        self._watcher = scheduler if isinstance(scheduler, WatchesChanges) else None
        # A caller that paces many loops (a sweep): told of each wake from a watch thread (True: a watched object
        # changed; False: an append), so that it looks at the woken loops only, not at every loop each pass.
        self.on_wake: Callable[[bool], None] | None = None
        self.append_watch: AppendWatch | None = None

    def watch_appends(self, job: JobId, cancel: Interrupts) -> AppendWatch | None:
        if self._settings.poll <= 0:
            return None

        def woken() -> None:
            self.appended = True
            self.woke = True
            if self.on_wake is not None:
                self.on_wake(False)
            cancel.wake()

        try:
            return self._means.store.watch_appends(job, woken)
        except Exception:  # a watch only saves reads: without one the record is read every poll interval
            return None

    def watching(self, watch: AppendWatch | None, was: bool) -> bool:
        """Whether appends wake the loop now; a change is said in the live view (a watch of a server's
        notices is lost with its connection, and made anew)."""
        now = watch is not None and watch.live()
        if now != was and watch is not None:
            self._means.progress.note(
                "the store's notice of appends is back: requests are answered as soon as they are committed"
                if now else
                f"the store's notice of appends is lost (reconnecting): requests are answered within "
                f"supervise.poll ({self._settings.poll:g} s) meanwhile")
        return now

    def await_change(self, loop: Loop, cancel: Interrupts) -> None:
        """Before a pause the pass loop waits out (``passes.Passes``): watch the loop's started objects, so
        their change wakes ``cancel``'s wait (a scheduler without such a watch, Slurm, is polled)."""
        self._watch_objects(watched(loop.state), cancel)

    @property
    def objects_watched(self) -> bool:
        """Whether a watch of the scheduler's is on the loop's started objects now (``await_change``)."""
        return self._change_watch is not None

    def resume_now(self, loop: Loop) -> tuple[bool, bool]:
        """After such a wait: whether this loop has something to look at before its pause is over (a
        watched object changed, its record was appended to), and whether it is an object's change, which
        asks the scheduler at once (an append says nothing new of the objects)."""
        changed, woke = self.changed, self.woke
        if changed:
            self.changed = False
            loop.ask_now = True
        return changed or woke, changed

    def appends_seen(self) -> None:
        """The caller is about to ask the store whether this job's record grew (``JobStore.last_seqs``): the
        appends told of until now are answered by that question. An append after it wakes again."""
        self.appended = False
        self.woke = False

    def record_grew(self) -> None:
        """The record grew past what this loop knows: its next step reads it."""
        self.appended = True

    def _watch_objects(self, objects: list[ObjectId], cancel: Interrupts) -> bool:
        """Whether a watch of the scheduler's on exactly ``objects`` is in place (made anew when they change)."""
        if objects == self._change_watched and (self._change_watch is not None or self._no_watch):
            return self._change_watch is not None  # in place, or the scheduler said it has none for these
        self.unwatch_objects()
        if not objects or self._watcher is None:
            return False

        def changed() -> None:
            self.changed = True
            if self.on_wake is not None:
                self.on_wake(True)
            cancel.wake()

        try:
            self._change_watch = self._watcher.watch_changes(objects, changed)
        except Exception:  # a watch only saves waiting: without one the scheduler is asked in slices
            self._change_watch = None
            return False  # asked again next time: a watch that failed may work then
        # None: this scheduler gives no watch for these objects; not asked again until they change (a
        # sweep's loop asks every element before every pause)
        self._no_watch = self._change_watch is None
        self._change_watched = list(objects)
        return self._change_watch is not None

    def unwatch_objects(self) -> None:
        if self._change_watch is not None:
            try:
                self._change_watch.close()
            except Exception:  # closing a watch cannot fail the supervision
                pass
        self._change_watch = None
        self._change_watched = []
        self._no_watch = False


def watched(state: JobState) -> list[ObjectId]:
    """The released objects that have not ended: the ones whose change is worth waking for."""
    return [a.object_id for a in state.attempts
            if a.object_id is not None and a.order is AttemptState.RELEASED and a.object_state not in ENDED
            and a.object_state is not ObjectState.HELD]
