"""The pass loop: every supervision this process runs, one job's or many's, paced by one loop in one thread.

Each job is supervised by its own loop and executor (``Supervisor.rounds``: its record, its lock, its steps,
each committed before the next request); ``Passes`` paces those loops, one job's as a sweep's hundreds:

- a pass steps each job that woke (a watched object of its changed, its record grew, a beat of its failed),
  whose time came, or whose supervision stops; a quiet one whose step would provably do nothing is carried
  on instead (``Carrying``); the choice is the engine's, pure (``engine.turn``);
- between passes, one wait for the soonest job's time, or a wake (a watch, a signal);
- on a signal every job steps once more and drains; the loop ends when no job is supervised and none may
  start.

What a caller adds (a sweep: the line of waiting jobs under --max-running, the gate of held jobs, its
attendance) it adds through ``PassHooks``; one job adds only its ending (``supervise_one``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Protocol

from dunscaith.domain.model.jobs import engine as en
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.domain.services.jobs.supervise import SupervisionEnd, Supervisor
from dunscaith.domain.services.jobs.supervise_loop import SIGNAL_SLICE
from dunscaith.domain.services.jobs.supervise_pacing import watched
from dunscaith.domain.services.jobs.sweep_elements import Active, Notices, Pass, arm, next_due
from dunscaith.ports.clock import Clock
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_store import AppendWatch, JobLock, JobStore, StoreError


class PassHooks:
    """What a caller adds to the passes; these defaults add nothing (one job: its loop is all there is)."""

    def before(self, stopping: bool) -> None:
        """As a pass begins: jobs started (a sweep's line under --max-running, the gate of held jobs)."""

    def more(self, stopping: bool) -> bool:
        """With no job supervised: whether the loop goes on (a job may still start)."""
        return False

    def ended(self, element: Active, end: SupervisionEnd) -> None:
        """A job's supervision ended in this pass (its lock and watches already let go)."""

    def after(self, stopping: bool) -> None:
        """As a pass ends: what its commits changed, shown and written (pointers, attendance)."""

    def room(self) -> bool:
        """Whether one more job may start at once (another pass then, without a wait)."""
        return False

    def refresh_at(self) -> datetime | None:
        """When the caller's own refresh is due (wall time; None: none), which the wait does not pass."""
        return None

    def next_at(self) -> float:
        """When the caller must look again for its own sake (monotonic; a held job's gate)."""
        return float("inf")

    def closed(self) -> None:
        """The loop is over, however it ended."""


class Passes:
    """The loop over the jobs supervised now (``active``), pass after pass, until none is and none may start."""

    def __init__(self, store: JobStore, clock: Clock, drain: Interrupts, began: Pass,
                 hooks: PassHooks | None = None) -> None:
        self._store = store
        self._clock = clock
        self._drain = drain
        self.hooks = hooks or PassHooks()  # what the caller adds (set before ``run``)
        self.began = began  # when the current pass began: the loops stepped in it time their polls from then
        self.active: dict[JobId, Active] = {}
        self.must_step: set[JobId] = set()  # jobs a caller's own beat found amiss: stepped in the next pass
        self.stopping = False  # a stop was requested: every loop drains, nothing new starts
        self._unarmed: set[JobId] = set()  # jobs stepped since their watches were last armed

    @property
    def notices(self) -> Notices:
        """What the jobs' watches told of since the last pass (each job's ``on_wake`` tells it here)."""
        return self.began.notices

    def run(self) -> bool:
        """Passes until no job is supervised and none may start; whether a stop was requested."""
        hooks = self.hooks
        while True:
            self.stopping = self.stopping or self._drain.pending() is not None
            hooks.before(self.stopping)
            if not self.active:
                if not hooks.more(self.stopping):
                    return self.stopping
                continue
            self._pass()
            if en.again_at_once(stopping=self.stopping, active=bool(self.active), must_step=bool(self.must_step),
                                room=hooks.room()):
                continue  # another pass at once: nothing to wait for
            arm(self._unarmed, self.active, self._drain)
            due = min(next_due(self.active, hooks.refresh_at(), self.began), hooks.next_at())
            self._wait(max(0.0, due - self._clock.monotonic()))

    def _pass(self) -> None:
        began = self.began
        began.wall, began.mono = self._clock.now(), self._clock.monotonic()
        # Only what concerns a job makes it step before its time: a watched object of its that changed, its
        # record grown (one question to the store for every job an append woke), a beat that failed. Every
        # other job is looked at only when its own time comes.
        woken = self._woken()
        for element in list(self.active.values()):
            ended = self._step_one(element, element.job in woken, began.mono)
            if ended is not None:
                del self.active[element.job]
                self._unarmed.discard(element.job)
                element.stack.close()
                self.hooks.ended(element, ended)
        self.hooks.after(self.stopping)

    def _wait(self, seconds: float) -> None:
        """The one wait between passes, which a watch (of appends, of objects) or a signal ends early.

        A job supervised alone whose scheduler gives no watch of its started objects but can wait for their
        change (``wait_for_change``: the local scheduler where inotify cannot be had) is asked in slices
        meanwhile, so its end is seen as it comes and a request or a signal within one slice; a scheduler
        that cannot tell (Slurm) answers at once, and the rest is slept."""
        clock = self._clock
        end = clock.monotonic() + seconds
        lone = next(iter(self.active.values())) if len(self.active) == 1 else None
        loop = lone.loop if lone is not None else None
        if lone is None or loop is None or seconds <= 0 or lone.supervisor.watches.objects_watched:
            objects = []
        else:
            objects = watched(loop.state)
        while lone is not None and objects:
            left = end - clock.monotonic()
            if left <= 0 or self.notices.told():
                return
            step = min(left, SIGNAL_SLICE)
            began = clock.monotonic()
            if lone.supervisor.means.scheduler.wait_for_change(objects, step):
                lone.supervisor.watches.changed = True  # asked at once, as a watch's change is
                self.notices.tell(lone.job, True)
                return
            if self._drain.pending() is not None:
                return
            if clock.monotonic() - began < step / 2:
                break  # this scheduler cannot tell: sleep to the next pass
        self._drain.wait(max(end - clock.monotonic(), 0.0))

    def _step_one(self, element: Active, woke: bool, now: float) -> SupervisionEnd | None:
        """One job's turn in a pass: stepped when it woke, its time came or the loop stops (carried on
        instead where its step would provably do nothing); its end when that step ended its supervision."""
        loop = element.loop
        moved = False
        if woke and loop is not None:
            _, moved = element.supervisor.watches.resume_now(loop)
        chosen = en.turn(begun=loop is not None, woke=woke, stopping=self.stopping, now=now, due=element.due)
        if chosen is en.Turn.WAIT:
            return None
        began = self.began
        query = element.query
        if chosen is en.Turn.CARRY and loop is not None and query is not None:
            # Its time came with nothing told of it: at its query, when the round's answer for it is the one it
            # last found nothing new in, its step would provably do nothing but count a quiet poll
            # (Supervisor.carry says which steps those are): its schedule is carried on instead, at a fraction
            # of a step's cost. Anything else is stepped.
            pause = element.supervisor.carrying.carry(loop, began.wall, began.mono, query.round_answer)
            if pause is not None:
                element.due = began.mono + pause
                return None
        if moved and query is not None:  # an object changed, perhaps after this round's answer was asked
            query.older_than(self._clock.monotonic())
        try:
            element.loop, pause = next(element.rounds) if loop is None else element.rounds.send(self.stopping)
        except StopIteration as done:
            end: SupervisionEnd = done.value
            return end
        # a loop paced by the pass counts its pause from the pass's start; one paced alone, from now
        element.due = en.due_after(began.mono, self._clock.monotonic(), pause, paced=element.paced)
        self._unarmed.add(element.job)
        return None

    def _woken(self) -> set[JobId]:
        """The jobs to step now whatever their time: those whose watched object changed, those whose record
        grew past what their loop knows, and those a caller's beat found amiss.

        On SQLite every commit wakes every job's watch (it cannot tell one job's rows from another's), this
        loop's own commits included: each woken job is not stepped (and its record not read) for that, but
        asked at once, with every other woken one, how far its record goes (``last_seqs``). The wake is taken
        as seen before the question is asked, so an append committed after it wakes again; one committed
        before it shows in the answer."""
        active = self.active
        moved, appended = self.notices.take()
        woken = moved | self.must_step
        self.must_step.clear()
        asked = [job for job in appended - woken if job in active and active[job].loop is not None]
        # a wake while the job's watch of appends is not live (lost: its connection) says nothing of the record:
        # that job reads it every poll from now on, and is stepped at once to say so and to pace itself so
        lost = {job for job in asked if not _live(active[job].supervisor.watches.append_watch)}
        woken |= lost
        asked = [job for job in asked if job not in lost]
        if not asked:
            return woken
        for job in asked:
            active[job].supervisor.watches.appends_seen()
        try:
            last = self._store.last_seqs(asked)
        except StoreError:
            last = {}  # not known: every one of them reads its record
        for job in asked:
            loop = active[job].loop
            if loop is not None and last.get(job) != loop.known:
                active[job].supervisor.watches.record_grew()
                woken.add(job)
        return woken

    @contextlib.contextmanager
    def closing(self) -> Iterator[None]:
        """Whatever ends the loop (an error), every job still supervised lets go of its lock and watches."""
        try:
            yield
        finally:
            for element in self.active.values():
                with contextlib.suppress(Exception):
                    element.rounds.close()
                element.stack.close()
            self.active.clear()
            self.hooks.closed()


def _live(watch: AppendWatch | None) -> bool:
    return watch is not None and watch.live()


class Gate(Protocol):
    """What holds one job back before its first create (it waits for other jobs' outcomes)."""

    def held(self, stopping: bool) -> SupervisionEnd | bool:
        """Whether it is still held (False: its supervision begins now), or how its supervision ends."""
        ...

    def wait(self) -> None:
        """Until it is looked at again (a signal ends the wait)."""
        ...


class _One(PassHooks):
    """One job's supervision: begun at once, or once its ``gate`` lets it; its ending kept, a give-up told to
    notify.command."""

    def __init__(self, supervisor: Supervisor, passes: Passes, begin: Callable[[], Active],
                 gate: Gate | None) -> None:
        self._supervisor = supervisor
        self._passes = passes
        self._begin = begin
        self._gate = gate
        self.begun = False
        self.end: SupervisionEnd | None = None

    def before(self, stopping: bool) -> None:
        if self.begun or self.end is not None:
            return
        held = self._gate.held(stopping) if self._gate is not None else False
        if isinstance(held, SupervisionEnd):
            self.end = held
        elif not held:
            self.begun = True
            element = self._begin()
            self._passes.active[element.job] = element

    def more(self, stopping: bool) -> bool:
        if self.begun or self.end is not None or self._gate is None:
            return False
        self._gate.wait()
        return True

    def ended(self, element: Active, end: SupervisionEnd) -> None:
        self.end = end
        self._supervisor.tell_gave_up(element.job, end)


def supervise_one(supervisor: Supervisor, job: JobId, lock: JobLock, drain: Interrupts, *,
                  bound: float | None = None, first: tuple[JobState, int] | None = None,
                  gate: Gate | None = None) -> SupervisionEnd:
    """Supervise ``job`` while holding its ``lock``, until an ending; never cancels the job: the pass loop
    with this one job in it.

    With ``bound`` (seconds) it stops with what is left after that long even before the outcome
    (``reconcile``: work carried on for a bounded period, like supervise.wait). ``first``: the record as the
    caller just read it (its state and its number of events), so that it is not read again. ``gate``: what
    holds it back before its first create (a job that waits for others), looked at before each pass until
    it lets it begin or ends it.

    Where the store tells of appends (``watch_appends``), a request wakes the loop when it is committed, so
    a healthy loop sleeps to its job's next poll instead of reading the record every ``supervise.poll``;
    elsewhere it reads it that often. Its supervised-at is refreshed by its own loop (not attended)."""
    clock = supervisor.means.clock
    passes = Passes(supervisor.means.store, clock, drain, Pass(clock.now(), clock.monotonic()))
    notices = passes.notices

    def begin() -> Active:
        stack = contextlib.ExitStack()  # its watches, let go of when it ends (``Passes.closing`` on an error)
        rounds = stack.enter_context(supervisor.rounds(job, lock, drain, bound=bound, first=first,
                                                       on_wake=lambda moved: notices.tell(job, moved)))
        return Active(job, supervisor, rounds, stack, None, None, None, None, paced=False)

    one = passes.hooks = _One(supervisor, passes, begin, gate)
    with passes.closing():
        passes.run()
    assert one.end is not None  # the loop ends only when its one job did, or its gate ended it
    return one.end
