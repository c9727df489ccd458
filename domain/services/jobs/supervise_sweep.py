"""One supervision of a sweep: every element this process can take, paced by one loop in one thread.

Each element keeps every per-job guarantee because it is supervised by the very loop a single job is
(``Supervisor.rounds``): its own lock, its own record, created held, released only once its creation is
known, an unknown attempt never resent. What the sweep adds is pacing and sharing:

- at most ``max_running`` elements without an outcome are supervised at once; the next one's first attempt
  is made only when one of them has its outcome (the others stay recorded, nothing sent);
- one scheduler query a round answers every element (``RoundQuery``);
- one wait: the process sleeps until the earliest element's next poll, or until a watch says one of them
  changed (its record appended to, its local object ended), or a signal;
- one drain on a signal: every element's step in flight is finished and every answer committed, and no
  element not yet started is started.

An element another live supervisor holds is listed, never taken; one bound to another host's local
scheduler is listed with that host.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, CreateOutcome, ObjectSpec
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.state import JobState, apply, fold
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery
from dunscaith.domain.model.shown import reason
from dunscaith.domain.services.jobs.pointer_notes import AttendanceNotes, Fanout
from dunscaith.domain.services.jobs.round_query import RoundQuery
from dunscaith.domain.services.jobs.supervise import Loop, Rounds, SupervisionEnd, Supervisor, new_nonce, output_paths
from dunscaith.domain.services.jobs.supervise_job import SuperviseJob
from dunscaith.domain.services.jobs.sweep_lock import holding_sweep, taken_sweeps
from dunscaith.domain.services.jobs.sweep_members import SweepMembers, index_key
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_progress import JobProgress, SweepSupervisionView
from dunscaith.ports.job_store import Append, JobLock, JobStore, LockBusy, LockLost, StoreError, UnknownJob
from dunscaith.ports.scheduler import CreatesArrays, Scheduler, SchedulerError

# An element due within this many seconds is stepped in the pass at hand: a due time computed as a sum of
# floats may fall a rounding error after the moment the wait for it ended, and waiting that out is a spin.
_EARLY = 0.001


class UnknownSweep(UnknownJob):
    """No element of a sweep of that name is recorded."""


@dataclass(frozen=True, slots=True)
class ElementEnd:
    job: JobId
    end: SupervisionEnd


@dataclass(frozen=True, slots=True)
class SweepSupervised:
    """What one supervision of a sweep did, and every element's summary after it."""

    sweep: JobId
    ends: tuple[ElementEnd, ...]  # the elements supervised here, in the order they ended
    elsewhere: tuple[tuple[JobId, str], ...]  # elements not taken: (element, why: held by a live supervisor...)
    drained: bool  # a signal stopped the supervision (every element's answers committed)
    elements: tuple[JobSummary, ...]  # every element as its record says after the supervision, by index
    queries: int  # confirming scheduler queries sent for the whole sweep


@dataclass(eq=False)
class _Taken:
    """An element whose lock is held and whose supervisor is made, its loop not begun yet."""

    member: JobSummary
    root: HostIdentity
    state: JobState
    known: int  # events of its record reflected in ``state``
    lock: JobLock
    stack: contextlib.ExitStack
    supervisor: Supervisor
    progress: JobProgress
    query: RoundQuery
    pointer: Pointer  # as its supervision began (a fresh element's first one: written with its array's)
    untold: ev.Event | None = None  # the last event committed and not yet told to ``progress`` (display only)


class _Notices:
    """What the elements' watches told of since the loop last looked (an element, and whether an object of it
    changed or an append was seen), written from the watches' threads. Each element is told at most once
    of each kind until the loop takes it: on SQLite every commit wakes every element's watch, hundreds of
    wakes a commit while a sweep starts, and this stays as small as the sweep."""

    def __init__(self) -> None:
        self._told: deque[tuple[JobId, bool]] = deque()
        self._pending: set[tuple[JobId, bool]] = set()

    def tell(self, job: JobId, moved: bool) -> None:
        key = (job, moved)
        if key not in self._pending:
            self._pending.add(key)
            self._told.append(key)

    def take(self) -> tuple[set[JobId], set[JobId]]:
        """(the elements whose object changed, those an append woke) since the last take. Each is no longer
        pending once taken, before the caller looks at what it concerns: a wake after that is told again,
        and one before it is in what the caller looks at (an append's commit shows before its wake)."""
        moved: set[JobId] = set()
        appended: set[JobId] = set()
        while self._told:
            key = self._told.popleft()
            self._pending.discard(key)
            (moved if key[1] else appended).add(key[0])
        return moved, appended


@dataclass
class _Pass:
    """When the loop's current pass over the elements began: every element stepped in it times its polls
    from this moment, so elements answered by one query stay on the same ticks (one query a round) however
    long the pass takes. And what the elements' watches told of since the last pass."""

    wall: datetime
    mono: float
    notices: _Notices = field(default_factory=_Notices)
    beats_until: Callable[[], datetime | None] = lambda: None  # when the sweep's loop beats every lock again

    def wall_time(self) -> datetime:
        return self.wall


@dataclass
class _Active:
    job: JobId
    supervisor: Supervisor
    rounds: Rounds
    stack: contextlib.ExitStack
    sweep: str | None  # the sweep it is an element of
    query: RoundQuery  # the round query of its cluster
    root: HostIdentity  # the record root its pointer names (the sweep's attendance names the same)
    index: int | None  # its index in its sweep
    loop: Loop | None = None
    due: float = 0.0  # monotonic: when its loop means to run again


def _array_elements(taken: list[_Taken], nonce: Nonce) -> tuple[int | None, list[tuple[int, ObjectSpec]]]:
    """The array's bound on running tasks (its sweep's, the same in every element) and each element's
    (index, spec), every spec carrying the array's one nonce."""
    bound = next((t.state.spec.member.max_running for t in taken if t.state.spec.member is not None), None)
    elements = [(t.state.spec.member.index if t.state.spec.member else 0, t.state.spec.object_spec(nonce))
                for t in taken]
    return bound, elements


def _answer_events(scheduler: CreatesArrays, answer: CreateAnswer, elements: list[tuple[int, ObjectSpec]],
                   ) -> tuple[dict[ObjectId, ObjectId], list[ev.Event]]:
    """Each element's event of the array's answer, in the elements' order, and the tasks created (task ->
    array): created as its own task, refused, or unknown as the array is."""
    tasks: dict[ObjectId, ObjectId] = {}
    events: list[ev.Event] = []
    for index, _ in elements:
        if answer.outcome is CreateOutcome.CREATED and answer.object_id is not None:
            task = scheduler.task_object(answer.object_id, index)
            tasks[task] = answer.object_id
            events.append(ev.Created(1, task))
        elif answer.outcome is CreateOutcome.REFUSED:
            events.append(ev.Refused(1, answer.detail or "refused"))
        else:
            events.append(ev.Unknown(1, answer.detail or "no reply"))
    return tasks, events


def _fresh_by_sweep(waiting: deque[JobSummary]) -> dict[str, list[JobSummary]]:
    """The waiting elements with no attempt yet, by sweep, in their waiting order."""
    fresh_by_sweep: dict[str, list[JobSummary]] = {}
    for member in waiting:
        if member.sweep is not None and member.attempts == 0:
            fresh_by_sweep.setdefault(member.sweep, []).append(member)
    return fresh_by_sweep


class SuperviseSweep:
    def __init__(self, store: JobStore, one: SuperviseJob, supervisor: Callable[..., Supervisor],
                 views: Callable[..., SweepSupervisionView], schedulers: Callable[[str], Scheduler], clock: Clock,
                 crash: CrashPoints, on_problem: Callable[[str], None]) -> None:
        self._store = store
        self._one = one  # a single job's supervision: the pointer, where a job is acted on, the sweep of strays
        self._supervisor = supervisor  # (cluster=, progress=, schedulers=) -> the supervisor of one element
        self._views = views  # (sweep=, and the command's display options) -> the sweep's live view
        self._schedulers = schedulers
        self._clock = clock
        self._crash = crash
        self._on_problem = on_problem

    def is_sweep(self, name: str) -> bool:
        """Whether ``name`` is a recorded sweep's (a job is never recorded under a sweep's name)."""
        return self._store.count(SummaryQuery(sweep=name, include_pruned=True, limit=1)) > 0

    def recorded_as(self, name: str) -> str | None:
        """"sweep" or "job" for what is recorded under ``name``; None when nothing is."""
        if self.is_sweep(name):
            return "sweep"
        try:
            self._store.summary(JobId(name))
        except UnknownJob:
            return None
        except StoreError:  # something is recorded under it, damaged: the job's own path says what
            pass
        return "job"

    def elements(self, sweep: JobId) -> list[JobSummary]:
        """Every element of ``sweep`` by index; UnknownSweep when none is recorded."""
        found = SweepMembers(self._store).elements(sweep)
        if not found:
            raise UnknownSweep(f"no sweep named {sweep} is recorded")
        return found

    def __call__(self, sweep: JobId, drain: Interrupts, *, fresh: bool, **display: object) -> SweepSupervised:
        """Supervise every element of ``sweep`` that is not settled and that no live supervisor holds, to its
        ending. ``fresh``: the sweep was just recorded (pointers are written for every element)."""
        members = self.elements(sweep)
        with holding_sweep(self._store, sweep):  # SweepSupervisedElsewhere: nothing taken
            return self._supervise(sweep, members, drain, fresh=fresh, again=lambda: self._after(sweep, members),
                                   **display)

    def unattended(self, drain: Interrupts, *, title: JobId, **display: object) -> SweepSupervised:
        """``supervise --all``: every job and element of this store that is not settled and whose lock
        nobody holds (the Unattended ones), in one loop; each sweep's --max-running still bounds it."""
        with contextlib.ExitStack() as sweeps:  # each sweep's lock, held while its elements are supervised
            return self._unattended(sweeps, drain, title=title, **display)

    def _unattended(self, sweeps: contextlib.ExitStack, drain: Interrupts, *, title: JobId,
                    **display: object) -> SweepSupervised:
        members = sorted(self._store.unattended(), key=lambda m: (m.sweep or "", index_key(m)))
        members = taken_sweeps(sweeps, self._store, members)  # a sweep taken meanwhile is left
        names = {m.job for m in members}

        def again() -> list[JobSummary]:
            try:
                return [self._store.summary(job) for job in sorted(names)]
            except StoreError:
                return members
        return self._supervise(title, members, drain, fresh=False, again=again, **display)

    def _supervise(self, title: JobId, members: list[JobSummary], drain: Interrupts, *, fresh: bool,
                   again: Callable[[], list[JobSummary]], **display: object) -> SweepSupervised:
        view = self._views(sweep=title, **display)
        ends: list[ElementEnd] = []
        elsewhere: list[tuple[JobId, str]] = []
        active: dict[JobId, _Active] = {}
        rounds: dict[str, RoundQuery] = {}
        attendance = self._one.attendance_notes()
        began = _Pass(self._clock.now(), self._clock.monotonic(), beats_until=attendance.next_at)
        with view, self._closing(active), contextlib.closing(attendance):
            view.show(members)
            attendance.begin(sorted({JobId(m.sweep) for m in members if m.sweep is not None}), began.wall)
            self._one.sweep_now()  # once, as supervision starts: objects nobody owns are stopped first
            waiting = _unsettled_in_order(members)
            bounds = self._max_running(waiting)
            attendance.holds_by_sweep(waiting)  # held by the sweeps' locks: named as attended from the start
            self._arrays(waiting, drain, fresh, view, rounds, active, elsewhere, began)
            stopping = False
            must_step: set[JobId] = set()  # elements the sweep's own beat found amiss: stepped in the next pass
            unarmed: set[JobId] = set()  # elements stepped since their watches were last armed
            while True:
                stopping = stopping or drain.pending() is not None
                if not stopping:
                    self._fill(waiting, bounds, drain, fresh, view, rounds, active, elsewhere, began)
                if not active:
                    if waiting and not stopping:
                        continue  # every started one failed to start: the next ones are tried
                    break
                for query in rounds.values():
                    query.new_round()
                began.wall, began.mono = self._clock.now(), self._clock.monotonic()
                now = began.mono
                # Only what concerns an element makes it step before its time: a watched object of its that
                # changed, its record grown (one question to the store for every element an append woke),
                # a beat that failed. Every other element is looked at only when its own time comes.
                woken = self._woken(began.notices, active, must_step)
                for element in list(active.values()):
                    ended = self._step_one(element, element.job in woken, stopping, began, now, unarmed)
                    if ended is not None:
                        ends.append(ElementEnd(element.job, ended))
                        del active[element.job]
                        unarmed.discard(element.job)
                        element.stack.close()
                        view.ended(element.job, str(ended.ending), ended.state)
                view.refresh()
                if not stopping:
                    self._attend(attendance, active, began, must_step)
                if stopping or not active or must_step or self._room_for_next(waiting, active, bounds):
                    continue  # another pass at once: nothing to wait for
                _arm(unarmed, active, drain)
                drain.wait(max(0.0, _next_due(active, attendance.next_at(), began) - self._clock.monotonic()))
            after = again()
            view.show(after)
        return SweepSupervised(title, tuple(ends), tuple(elsewhere), stopping, tuple(after),
                               sum(q.asked for q in rounds.values()))

    def _fill(self, waiting: deque[JobSummary], bounds: dict[str, int | None], drain: Interrupts, fresh: bool,
              view: SweepSupervisionView,
              rounds: dict[str, RoundQuery], active: dict[JobId, _Active], elsewhere: list[tuple[JobId, str]],
              began: _Pass) -> None:
        """Waiting elements started, in order, while their sweep's --max-running leaves room."""
        while waiting and self._room(waiting[0], active, bounds):
            member = waiting.popleft()
            started = self._start(member, drain, fresh, view, rounds, active, elsewhere, began)
            if started is not None:
                active[member.job] = started

    def _step_one(self, element: _Active, woke: bool, stopping: bool, began: _Pass, now: float,
                  unarmed: set[JobId]) -> SupervisionEnd | None:
        """One element's turn in a pass: stepped when it woke, its time came or the sweep stops (carried on
        instead where its step would provably do nothing); its end when that step ended its supervision."""
        loop = element.loop
        moved = False
        if woke and loop is not None:
            _, moved = element.supervisor.resume_now(loop)
        if not (stopping or loop is None or woke or now + _EARLY >= element.due):
            return None
        if not (stopping or loop is None or woke):
            # Its time came with nothing told of it: at its query, when the round's answer for it is the one it
            # last found nothing new in, its step would provably do nothing but count a quiet poll
            # (Supervisor.carry says which steps those are): its schedule is carried on instead, at a fraction
            # of a step's cost. Anything else is stepped.
            pause = element.supervisor.carry(loop, began.wall, began.mono, element.query.round_answer)
            if pause is not None:
                element.due = began.mono + pause
                return None
        if moved:  # an object changed, perhaps after this round's answer was asked: it cannot tell
            element.query.older_than(self._clock.monotonic())
        try:
            element.loop, pause = next(element.rounds) if loop is None else element.rounds.send(stopping)
        except StopIteration as done:
            end: SupervisionEnd = done.value
            return end
        element.due = began.mono + pause  # the pause counts from the pass's start
        unarmed.add(element.job)
        return None

    def _woken(self, notices: _Notices, active: dict[JobId, _Active], must_step: set[JobId]) -> set[JobId]:
        """The elements to step now whatever their time: those whose watched object changed, those whose
        record grew past what their loop knows, and those the sweep's beat found amiss.

        On SQLite every commit wakes every element's watch (it cannot tell one job's rows from another's),
        the sweep's own commits included: each woken element is not stepped (and its record not read) for
        that, but asked at once, with every other woken one, how far its record goes (``last_seqs``). The
        wake is taken as seen before the question is asked, so an append committed after it wakes again;
        one committed before it shows in the answer."""
        moved, appended = notices.take()
        woken = moved | must_step
        must_step.clear()
        asked = [job for job in appended - woken if job in active and active[job].loop is not None]
        if not asked:
            return woken
        for job in asked:
            active[job].supervisor.appends_seen()
        try:
            last = self._store.last_seqs(asked)
        except StoreError:
            last = {}  # not known: every one of them reads its record
        for job in asked:
            loop = active[job].loop
            if loop is not None and last.get(job) != loop.known:
                active[job].supervisor.record_grew()
                woken.add(job)
        return woken

    def _attend(self, attendance: AttendanceNotes, active: dict[JobId, _Active], began: _Pass,
                must_step: set[JobId]) -> None:
        """The sweep's attendance refreshed when due (every ten poll intervals), and with it the lock of every
        element carried on (``Supervisor.carry`` beats nothing) whose last beat announced its next loop before
        the next refresh: beaten now, announcing the refresh after that one, when it is beaten again. So each
        such lock is written once every twenty poll intervals (a job's own polls back off to 160 s) and still
        shows a live loop (display only: ``loop_stale``). A beat that fails steps its element next pass: a lost
        lock ends it there, having sent nothing more."""
        before = attendance.next_at()
        if before is not None and began.wall < before:
            return  # not due (and what it would name is not worked out: it is every element's)
        attendance.refresh(self._held(active), began.wall)
        until = attendance.next_at()
        if until is None or until == before:
            return
        announce = until + (until - began.wall)
        for element in active.values():
            loop = element.loop
            if loop is None or (loop.announced is not None and loop.announced >= until):
                continue
            if not element.supervisor.beat_carried(loop, began.wall, announce):
                must_step.add(element.job)

    @staticmethod
    def _held(active: dict[JobId, _Active]) -> dict[JobId, tuple[HostIdentity, frozenset[int]]]:
        """Each sweep's root and the indices of its elements supervised now: what its attendance names."""
        held: dict[JobId, tuple[HostIdentity, set[int]]] = {}
        for element in active.values():
            if element.sweep is not None and element.index is not None:
                held.setdefault(JobId(element.sweep), (element.root, set()))[1].add(element.index)
        return {sweep: (root, frozenset(indices)) for sweep, (root, indices) in held.items()}

    @contextlib.contextmanager
    def _closing(self, active: dict[JobId, _Active]) -> Iterator[None]:
        """Whatever ends the loop (an error), every element still supervised lets go of its lock and watches."""
        try:
            yield
        finally:
            for element in active.values():
                with contextlib.suppress(Exception):
                    element.rounds.close()
                element.stack.close()
            active.clear()

    @staticmethod
    def _room(member: JobSummary, active: dict[JobId, _Active], bounds: dict[str, int | None]) -> bool:
        """Whether ``member`` may be started now: its sweep's --max-running counts every supervised element
        of that sweep without an outcome yet. A job of its own, or one with attempts already (it may be
        running: it is watched whatever the bound), always may."""
        bound = bounds.get(member.sweep) if member.sweep is not None else None
        if bound is None or member.attempts > 0:
            return True
        busy = sum(1 for e in active.values() if e.sweep == member.sweep
                   and (e.loop is None or e.loop.state.outcome is None))
        return busy < bound

    def _room_for_next(self, waiting: deque[JobSummary], active: dict[JobId, _Active],
                       bounds: dict[str, int | None]) -> bool:
        """Whether the next waiting element may be started now."""
        return bool(waiting) and self._room(waiting[0], active, bounds)

    def _max_running(self, waiting: deque[JobSummary]) -> dict[str, int | None]:
        """Each sweep's --max-running, from the first of its elements whose record reads."""
        bounds: dict[str, int | None] = {}
        for member in waiting:
            if member.sweep is None or member.sweep in bounds:
                continue
            try:
                spec = fold(self._store.read(member.job)).spec
            except (StoreError, JobsError):
                continue
            bounds[member.sweep] = spec.member.max_running if spec.member is not None else None
        return bounds

    def _start(self, member: JobSummary, drain: Interrupts, fresh: bool, view: SweepSupervisionView,
               rounds: dict[str, RoundQuery], active: dict[JobId, _Active],
               elsewhere: list[tuple[JobId, str]], began: _Pass) -> _Active | None:
        taken = self._take(member, fresh, view, rounds, active, elsewhere)
        return None if taken is None else self._begin(taken, drain, began)

    def _take(self, member: JobSummary, fresh: bool, view: SweepSupervisionView, rounds: dict[str, RoundQuery],
              active: dict[JobId, _Active], elsewhere: list[tuple[JobId, str]]) -> _Taken | None:
        """The element's record read and its lock taken, its supervisor made; None (said why) when it is
        not this process's to supervise."""
        job = member.job
        stack = contextlib.ExitStack()
        try:
            record = self._store.read(job)
            state = fold(record)
            owner = self._one.owner_elsewhere(state)
            if owner is not None:
                elsewhere.append((job, f"runs on the local scheduler of host {owner}: supervise it there"))
                return None
            lock = stack.enter_context(self._store.lock(job))
            pointer = self._one.pointer_for(state)
            progress = self._progress(state, pointer, fresh, view)
            query = rounds.get(state.spec.cluster)
            if query is None:
                query = RoundQuery(self._schedulers(state.spec.cluster), lambda: list(active), self._clock)
                rounds[state.spec.cluster] = query
            chosen = query
            supervisor = self._supervisor(cluster=state.spec.cluster, progress=progress,
                                          schedulers=lambda _cluster: chosen)
            return _Taken(member, pointer.root_host, state, len(record.events), lock, stack, supervisor, progress,
                          query, pointer)
        except LockBusy:
            stack.close()
            elsewhere.append((job, "held by another live supervisor or command"))  # said once, at the end
            return None
        except (StoreError, JobsError) as exc:  # its record does not read, or the store refused its lock
            stack.close()
            elsewhere.append((job, f"not taken: {reason(exc)}"))
            view.line(f"{job}: not supervised: {reason(exc)}")
            return None
        except BaseException:
            stack.close()
            raise

    @staticmethod
    def _begin(taken: _Taken, drain: Interrupts, began: _Pass) -> _Active:
        """The element's loop, from its record as last read (or as the array's commits left it)."""
        job = taken.member.job
        notices = began.notices
        try:
            steps = taken.stack.enter_context(taken.supervisor.rounds(
                job, taken.lock, drain, first=(taken.state, taken.known), paced_from=began.wall_time,
                attended=taken.member.sweep is not None,  # an element's supervised-at: its sweep's attendance
                on_wake=lambda moved: notices.tell(job, moved), beats_until=began.beats_until))
        except BaseException:
            taken.stack.close()
            raise
        return _Active(taken.member.job, taken.supervisor, steps, taken.stack, taken.member.sweep, taken.query,
                       taken.root, taken.member.sweep_index)

    # ------------------------------------------------------------------ a sweep as one array

    def _arrays(self, waiting: deque[JobSummary], drain: Interrupts, fresh: bool, view: SweepSupervisionView,
                rounds: dict[str, RoundQuery], active: dict[JobId, _Active],
                elsewhere: list[tuple[JobId, str]], began: _Pass) -> None:
        """Each sweep whose fresh elements (no attempt yet) a scheduler can make in one request (a Slurm job
        array) is sent so, and its elements' loops started; the others stay waiting, each its own object."""
        for sweep, members in _fresh_by_sweep(waiting).items():
            scheduler = self._array_scheduler(sweep, members, view)
            if scheduler is None:
                continue
            if drain.pending() is not None:
                return
            tried = {m.job for m in members}  # taken now, or said why not: none is tried again below
            remaining = [m for m in waiting if m.job not in tried]
            waiting.clear()
            waiting.extend(remaining)
            # each fresh element's first pointer is written below with all the others', not as it is taken
            taken = [t for m in members if (t := self._take(m, False, view, rounds, active, elsewhere)) is not None]
            if fresh:
                self._first_pointers(taken)
            sent = [t for t in taken if not t.state.attempts]  # taken since the summary was read: still fresh
            for t in taken:
                if t not in sent:
                    active[t.member.job] = self._begin(t, drain, began)
            if sent:
                try:
                    self._send_array(JobId(sweep), scheduler, sent, view, active)
                finally:
                    self._tell(sent)
                for t in sent:
                    active[t.member.job] = self._begin(t, drain, began)

    def _array_scheduler(self, sweep: str, members: list[JobSummary], view: SweepSupervisionView,
                         ) -> CreatesArrays | None:
        """The scheduler that makes these fresh elements of one sweep in one request, or None (said on the view
        when the scheduler refuses): they are on more than one cluster, its scheduler makes no arrays, or it
        refuses this one."""
        cluster = members[0].cluster
        if any(m.cluster != cluster for m in members):
            return None
        scheduler = self._schedulers(cluster)
        if not isinstance(scheduler, CreatesArrays):
            return None
        largest = max(m.sweep_index or 0 for m in members)
        try:
            refused = scheduler.array_refusal(len(members), largest, self._scripts(members))
        except Exception as exc:  # asking only decides the way: one object per element is always sound
            refused = f"the scheduler could not be asked: {reason(exc)}"
        if refused is not None:
            view.line(f"sweep {sweep}: not one job array ({refused}): one held job per element")
            return None
        return scheduler

    def _scripts(self, members: list[JobSummary]) -> list[str | None]:
        """Each element's batch script (None: a command), for the scheduler to say whether they can share one
        array's options. A sweep is one submit: when its first element runs a command, they all do."""
        scripts: list[str | None] = []
        for member in members:
            script = fold(self._store.read(member.job)).spec.script
            if script is None and not scripts:
                return []
            scripts.append(script)
        return scripts

    def _send_array(self, sweep: JobId, scheduler: CreatesArrays, taken: list[_Taken], view: SweepSupervisionView,
                    active: dict[JobId, _Active]) -> None:
        """Every element's "submitting" durable (one nonce, the array's), then ONE request, then every answer
        committed, then ONE release of the array, then every "released" committed: each phase's events of all
        elements in one transaction (one commit, one sync), each before the request that follows it. Whatever
        fails on the way is left to each element's own loop, which finds the attempt unanswered and treats it
        as any job's: marked unknown, looked for by its name and nonce, never sent again; or created and not
        released, and releases it (the array whole, by the first element's release)."""
        nonce = new_nonce()
        if not self._append_all(taken, [ev.Submitting(1, nonce)] * len(taken), "submitting-committed"):
            view.line(f"sweep {sweep}: not sent: the records of its elements could not be written; each "
                      "element is looked after on its own")
            return
        try:
            for t in taken:
                t.lock.check()  # right before the request: every element is still ours
        except (LockLost, StoreError) as exc:
            view.line(f"sweep {sweep}: not sent: {reason(exc)}")
            return
        bound, elements = _array_elements(taken, nonce)
        try:
            answer = scheduler.create_array_held(sweep, elements, bound)
        except Exception as exc:  # whatever went wrong, the request may have gone out: unknown, never resent
            answer = CreateAnswer(CreateOutcome.UNKNOWN, None, f"{type(exc).__name__}: {exc}")
        self._crash.reached("create-answered")
        tasks, events = _answer_events(scheduler, answer, elements)
        every = self._append_all(taken, events, "answer-committed")
        if answer.outcome is CreateOutcome.CREATED and answer.object_id is not None:
            view.line(f"sweep {sweep}: {len(taken)} elements sent as job array {answer.object_id}")
            if every and not self._release_array(answer.object_id, taken, list(tasks)):
                jobs = {t.member.job for t in taken}
                taken[0].query.whole_array(answer.object_id, tasks, lambda: not any(
                    e.loop is not None and e.loop.state.hold_wanted for job, e in active.items() if job in jobs))

    def _release_array(self, array: ObjectId, taken: list[_Taken], tasks: list[ObjectId]) -> bool:
        """The array released in one request once every element's creation is durable, and every element's
        "released" committed in one transaction. False when each element's loop is to release as a job's
        does (the array whole, by the first one, unless one of them is to stay held): nothing was sent (an
        element's record grew since: a command, a hold, a cancel; a lock not proven held; the release
        failed), or it was and its "released" could not be committed (released again: one request)."""
        if any(t.state.hold_wanted for t in taken):
            return False
        scheduler = taken[0].query  # the cluster's, as each element's loop asks it
        try:
            if self._store.last_seqs([t.member.job for t in taken]) != {t.member.job: t.known for t in taken}:
                return False
            for t in taken:
                t.lock.check()  # right before the request, as every release
            scheduler.release(array)
        except (LockLost, StoreError, SchedulerError):
            return False
        self._crash.reached("release-sent")
        released: list[ev.Event] = []
        for task in tasks:  # each element's, in order
            paths = output_paths(scheduler, task)
            released.append(ev.Released(1, task, paths.stdout, paths.stderr))
        return self._append_all(taken, released, "release-committed")

    def _append_all(self, taken: list[_Taken], events: list[ev.Event], point: str) -> bool:
        """Each element's event of the array's phase made durable in one transaction (their states carried
        on), or none of them and False."""
        now = self._clock.now()
        try:
            encoded = [ev.encode(event) for event in events]
            self._store.append_many([Append(t.member.job, now, kind, data)
                                     for t, (kind, data) in zip(taken, encoded, strict=True)])
        except StoreError:
            return False
        for t, event in zip(taken, events, strict=True):
            t.state = apply(t.state, event, now)
            t.known += 1
            t.untold = event
        self._crash.reached(point)
        return True

    @staticmethod
    def _tell(taken: list[_Taken]) -> None:
        """Each element's pointer and live line told its state once the array's phases are done, not at each
        phase: a pointer write is synced (a 500-element array's 1,500 phase writes took 20 of its 38 s on a
        loaded test machine), and a pointer is display only, here a moment behind its record."""
        for t in taken:
            if t.untold is not None:
                t.progress.committed(t.state, t.untold)
                t.untold = None

    def _first_pointers(self, taken: list[_Taken]) -> None:
        """The fresh elements' first pointers written together, every one durable before the array's request
        (other login nodes route by them): one sync for the batch, not four an element."""
        try:
            self._one.write_pointers([t.pointer for t in taken])
        except Exception as exc:  # display only; the record is what counts
            self._on_problem(f"pointers of {len(taken)} elements not written: {reason(exc)}")

    def _progress(self, state: JobState, pointer: Pointer, fresh: bool, view: SweepSupervisionView) -> JobProgress:
        if fresh:
            try:
                self._one.write_pointer(pointer)
            except Exception as exc:  # display only; the record is what counts
                self._on_problem(f"pointer of {state.name} not written: {reason(exc)}")
        return Fanout([view.element(state.name), self._one.pointer_notes(pointer)])

    def _after(self, sweep: JobId, members: list[JobSummary]) -> list[JobSummary]:
        try:
            return self.elements(sweep)
        except StoreError as exc:
            self._on_problem(f"the sweep's elements could not be read again: {reason(exc)}")
            return members


def _next_due(active: dict[JobId, _Active], refresh: datetime | None, began: _Pass) -> float:
    """When the sweep's next pass is due (monotonic): the soonest element's time, or the attendance file's
    refresh (``refresh``, wall time) when that is sooner."""
    due = min(e.due for e in active.values())
    if refresh is not None:
        due = min(due, began.mono + (refresh - began.wall).total_seconds())
    return due


def _arm(unarmed: set[JobId], active: dict[JobId, _Active], drain: Interrupts) -> None:
    """The watches of an element's objects change only when it steps: armed once then, not each pass."""
    for job in unarmed:
        armed = active.get(job)
        if armed is not None and armed.loop is not None:
            armed.supervisor.await_change(armed.loop, drain)
    unarmed.clear()


def _unsettled_in_order(members: list[JobSummary]) -> deque[JobSummary]:
    """The elements to supervise, those with attempts first: they may be running and must be watched whatever
    the bound; then by sweep and index."""
    return deque(sorted((m for m in members if not m.settled),
                        key=lambda m: (m.attempts == 0, m.sweep or "", index_key(m))))
