"""One supervision of a sweep: every element this process can take, paced by one loop in one thread.

Each element keeps every per-job guarantee because it is supervised by the very loop a single job is
(``Supervisor.rounds``), paced by the same pass loop (``passes.Passes``): its own lock, its own record,
created held, released only once its creation is known, an unknown attempt never resent. What the sweep
adds (``_SweepPasses``, the pass loop's hooks) is pacing and sharing:

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
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import JobRecord
from dunscaith.domain.model.jobs.state import JobState, fold
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery
from dunscaith.domain.model.shown import reason
from dunscaith.domain.services.jobs.gates import Gates, PipelineReport, RecordedPipeline
from dunscaith.domain.services.jobs.passes import Passes, PassHooks
from dunscaith.domain.services.jobs.pointer_notes import AttendanceNotes, Fanout
from dunscaith.domain.services.jobs.round_query import RoundQuery
from dunscaith.domain.services.jobs.supervise import SupervisionEnd, Supervisor
from dunscaith.domain.services.jobs.supervise_job import SuperviseJob
from dunscaith.domain.services.jobs.sweep_arrays import SweepArrays
from dunscaith.domain.services.jobs.sweep_elements import (
    Active,
    Notices,
    Pass,
    Taken,
    begin,
    held,
    room,
    room_for_next,
    unsettled_in_order,
)
from dunscaith.domain.services.jobs.sweep_gate import HeldBack
from dunscaith.domain.services.jobs.sweep_lock import SweepSupervisedElsewhere, holding_sweep, taken_sweeps
from dunscaith.domain.services.jobs.sweep_members import SweepMembers, index_key
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_progress import JobProgress, SweepSupervisionView
from dunscaith.ports.job_store import JobLock, JobStore, LockBusy, StoreError, UnknownJob
from dunscaith.ports.scheduler import Scheduler

_Notices = Notices  # the name a test reaches it by



def _named_jobs(jobs: list[JobId], most: int = 5) -> str:
    more = f" and {len(jobs) - most:,} more" if len(jobs) > most else ""
    return ", ".join(jobs[:most]) + more


def _gate_lines(gate: HeldBack) -> list[str]:
    """What the live view says of the jobs held back as supervision starts: how many wait, and each blocked."""
    waiting = [job for job in gate.held if job not in gate.blocked]
    lines = [f"waiting: {_named_jobs(waiting)} (nothing is sent for them until what they wait for has its "
             "outcome)"] if waiting else []
    return lines + [f"{job}: {answer.line()}: nothing is created for it" for job, answer in gate.blocked.items()]


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
    blocked: tuple[tuple[JobId, str], ...] = ()  # jobs never created: what waits for them failed (and how)
    report: PipelineReport | None = None  # a pipeline's: each step's standing after the supervision


class SuperviseSweep:
    def __init__(self, store: JobStore, one: SuperviseJob, supervisor: Callable[..., Supervisor],
                 views: Callable[..., SweepSupervisionView], schedulers: Callable[[str], Scheduler], clock: Clock,
                 crash: CrashPoints, on_problem: Callable[[str], None],
                 supervisors: Callable[..., Callable[[JobProgress], Supervisor]] | None = None) -> None:
        self._store = store
        self._one = one  # a single job's supervision: the pointer, where a job is acted on, the sweep of strays
        self._supervisor = supervisor  # (cluster=, progress=, schedulers=) -> the supervisor of one element
        # (cluster=, schedulers=) -> the maker of each element's supervisor of that cluster (its progress in), what
        # they share made once; None: each made by ``supervisor``
        self._supervisors = supervisors
        self._makers: dict[int, tuple[RoundQuery, Callable[[JobProgress], Supervisor]]] = {}  # by its round query
        self._views = views  # (sweep=, and the command's display options) -> the sweep's live view
        self._schedulers = schedulers
        self._clock = clock
        self._crash = crash
        self._on_problem = on_problem
        self._arrays = SweepArrays(store, schedulers, clock, crash)  # fresh elements sent as one job array

    def is_sweep(self, name: str) -> bool:
        """Whether ``name`` is a recorded sweep's (a job is never recorded under a sweep's name)."""
        return self._store.count(SummaryQuery(sweep=name, include_pruned=True, limit=1)) > 0

    def recorded_as(self, name: str) -> str | None:
        """"sweep", "job" or "pipeline" for what is recorded under ``name`` (in that order); None when nothing is."""
        if self.is_sweep(name):
            return "sweep"
        try:
            self._store.summary(JobId(name))
        except UnknownJob:
            return "pipeline" if Gates(self._store).pipeline(name) is not None else None
        except StoreError:  # something is recorded under it, damaged: the job's own path says what
            pass
        return "job"

    def pipeline(self, name: JobId, drain: Interrupts, *, fresh: bool, **display: object) -> SweepSupervised:
        """Supervise every job of every step of the pipeline ``name`` that is not settled, in one loop: each
        step is created once what it waits for is as it asks (``HeldBack``), never before. The pipeline's
        name is held as a lock (one supervisor per pipeline), and each sweep step's as ``supervise NAME``
        of a sweep holds it. UnknownSweep when no pipeline of that name is recorded."""
        gates = Gates(self._store)
        found = gates.pipeline(name)
        if found is None:
            raise UnknownSweep(f"no job, sweep or pipeline named {name} is recorded")
        with holding_sweep(self._store, name, "pipeline"), contextlib.ExitStack() as sweeps:
            members = found.members()
            taken = {m.sweep for m in taken_sweeps(sweeps, self._store, members)}
            busy = sorted({m.sweep for m in members if m.sweep is not None and m.sweep not in taken})
            if busy:  # a sweep step another live process supervises (supervise NAME.STEP): nothing is taken
                raise SweepSupervisedElsewhere(JobId(busy[0]))

            last: list[RecordedPipeline] = [found]

            def again() -> list[JobSummary]:
                try:
                    last[0] = Gates(self._store).pipeline(name) or last[0]
                except StoreError as exc:
                    self._on_problem(f"the pipeline's jobs could not be read again: {reason(exc)}")
                return last[0].members()
            done = self._supervise(name, members, drain, fresh=fresh, again=again, **display)
            return replace(done, report=gates.report(last[0]))

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
        rounds: dict[str, RoundQuery] = {}
        attendance = self._one.attendance_notes()
        began = Pass(self._clock.now(), self._clock.monotonic(), beats_until=attendance.next_at)
        gate = HeldBack(Gates(self._store))  # jobs whose first create waits for other jobs: not taken yet
        sweep = _SweepPasses(self, drain, view, attendance, gate, ends, rounds, elsewhere, fresh)
        passes = sweep.passes = Passes(self._store, self._clock, drain, began, sweep)
        active = passes.active
        with view, passes.closing(), contextlib.closing(attendance):
            view.show(members)
            attendance.begin(sorted({JobId(m.sweep) for m in members if m.sweep is not None}), began.wall)
            self._one.sweep_now()  # once, as supervision starts: objects nobody owns are stopped first
            waiting = sweep.waiting = unsettled_in_order(members)
            sweep.bounds = _max_running(self._store, waiting)
            attendance.holds_by_sweep(waiting)  # held by the sweeps' locks: named as attended from the start
            waiting = sweep.waiting = _hold_back(gate, waiting, view, self._one if fresh else None, self._on_problem)
            self._arrays(waiting, drain, view, active, lambda ms: self._take_all(ms, view, rounds, active, elsewhere),
                         began, self._first_pointers if fresh else lambda _taken: None)
            stopping = passes.run()
            after = again()
            view.show(_as_held(after, gate.words()))  # what is still held: waiting or blocked, not "recorded"
        return SweepSupervised(title, tuple(ends), tuple(elsewhere), stopping, tuple(after),
                               sum(q.asked for q in rounds.values()), gate.blocked_lines())

    def _open_gates(self, gate: HeldBack, waiting: deque[JobSummary], ends: list[ElementEnd],
                    active: dict[JobId, Active], stopping: bool, drain: Interrupts, view: SweepSupervisionView,
                    rounds: dict[str, RoundQuery], elsewhere: list[tuple[JobId, str]], began: Pass,
                    fresh: bool) -> None:
        """The held jobs whose gate opened, put in the line to start: a whole sweep's fresh elements sent as
        one array where its scheduler makes them, the others started one by one as any waiting job."""
        moved = frozenset({*(e.job for e in ends), *(job for job, e in active.items()
                                                      if e.loop is not None and e.loop.state.outcome is not None)})
        blocked_before = set(gate.blocked)
        opened = gate.release(self._clock.monotonic(), moved, stopping=stopping,
                              ours=lambda: {*active, *(m.job for m in waiting), *gate.held})
        for job in sorted(set(gate.blocked) - blocked_before):
            view.line(f"{job}: {gate.blocked[job].line()}: nothing is created for it")
        if set(gate.blocked) != blocked_before:
            view.held(gate.words())
        if not opened:
            return
        view.line(f"ready: {_named_jobs([m.job for m in opened])}: every job they wait for is as they ask")
        line = deque(opened)
        self._arrays(line, drain, view, active, lambda ms: self._take_all(ms, view, rounds, active, elsewhere),
                     began, self._first_pointers if fresh else lambda _taken: None)
        waiting.extend(line)

    def _fill(self, waiting: deque[JobSummary], bounds: dict[str, int | None], drain: Interrupts, fresh: bool,
              view: SweepSupervisionView,
              rounds: dict[str, RoundQuery], active: dict[JobId, Active], elsewhere: list[tuple[JobId, str]],
              began: Pass) -> None:
        """Waiting elements started, in order, while their sweep's --max-running leaves room."""
        while waiting and room(waiting[0], active, bounds):
            member = waiting.popleft()
            started = self._start(member, drain, fresh, view, rounds, active, elsewhere, began)
            if started is not None:
                active[member.job] = started

    def _start(self, member: JobSummary, drain: Interrupts, fresh: bool, view: SweepSupervisionView,
               rounds: dict[str, RoundQuery], active: dict[JobId, Active],
               elsewhere: list[tuple[JobId, str]], began: Pass) -> Active | None:
        taken = self._take(member, fresh, view, rounds, active, elsewhere)
        return None if taken is None else begin(taken, drain, began)

    def _take_all(self, members: list[JobSummary], view: SweepSupervisionView, rounds: dict[str, RoundQuery],
                  active: dict[JobId, Active], elsewhere: list[tuple[JobId, str]]) -> list[Taken]:
        """``_take`` of each of ``members`` (fresh elements, their first pointers written together by the caller):
        their records read in one question to the store and their locks taken together, then each checked once
        its lock is held (``_as_locked``); those not this process's to supervise left out (said why)."""
        try:
            records = self._store.read_many([m.job for m in members])
        except StoreError:
            records = {}  # each read on its own below, which says why one does not
        states: dict[JobId, JobState] = {}
        for job, record in records.items():
            with contextlib.suppress(JobsError):  # (its own take says why it does not fold)
                states[job] = fold(record)
        try:  # together where the store can (one statement on a server); each then handed to its element
            locks = dict(self._store.lock_many([m.job for m in members if m.job in states
                                                and self._one.owner_elsewhere(states[m.job]) is None]))
        except StoreError:
            locks = {}  # each taken on its own below, which says why one is not
        try:
            taken = [t for m in members if (t := self._take(m, False, view, rounds, active, elsewhere,
                                                             records.get(m.job), states.get(m.job),
                                                             locks.pop(m.job, None))) is not None]
        finally:
            for unused in locks.values():  # (none: each element's is handed to it)
                unused.__exit__(None, None, None)
        return self._as_locked(taken, view, elsewhere)

    def _as_locked(self, taken: list[Taken], view: SweepSupervisionView,
                   elsewhere: list[tuple[JobId, str]]) -> list[Taken]:
        """``taken``, each as its record is now that its lock is held: their records were read before their
        locks were taken, and a command may have acted on one in between (its lock free then). One question
        says which grew; only those are read again. One that no longer reads is let go (said why)."""
        try:
            last = self._store.last_seqs([t.member.job for t in taken])
        except StoreError:
            last = {}  # not known: each read again
        kept: list[Taken] = []
        for t in taken:
            if last.get(t.member.job) != t.known:
                try:
                    record = self._store.read(t.member.job)
                    t.state, t.known = fold(record), len(record.events)
                except (StoreError, JobsError) as exc:
                    t.stack.close()
                    elsewhere.append((t.member.job, f"not taken: {reason(exc)}"))
                    view.line(f"{t.member.job}: not supervised: {reason(exc)}")
                    continue
            kept.append(t)
        return kept

    def _take(self, member: JobSummary, fresh: bool, view: SweepSupervisionView, rounds: dict[str, RoundQuery],
              active: dict[JobId, Active], elsewhere: list[tuple[JobId, str]], record: JobRecord | None = None,
              state: JobState | None = None, held: AbstractContextManager[JobLock] | None = None) -> Taken | None:
        """The element's record read and its lock taken, its supervisor made; None (said why) when it is not
        this process's to supervise. ``record``, ``state``, ``held``: as just read, folded and locked with
        others (its lock is given back on any way out but its supervision)."""
        job = member.job
        stack = contextlib.ExitStack()
        try:
            lock = stack.enter_context(held) if held is not None else None
            record = record if record is not None else self._store.read(job)
            state = state if state is not None else fold(record)
            owner = self._one.owner_elsewhere(state)
            if owner is not None:
                stack.close()
                elsewhere.append((job, f"runs on the local scheduler of host {owner}: supervise it there"))
                return None
            lock = lock if lock is not None else stack.enter_context(self._store.lock(job))
            pointer = self._one.pointer_for(state)
            progress = self._progress(state, pointer, fresh, view)
            query = rounds.get(state.spec.cluster)
            if query is None:
                query = RoundQuery(self._schedulers(state.spec.cluster), lambda: list(active), self._clock)
                rounds[state.spec.cluster] = query
            supervisor = self._maker(state.spec.cluster, query)(progress)
            return Taken(member, pointer.root_host, state, len(record.events), lock, stack, supervisor, progress,
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

    def _maker(self, cluster: str, query: RoundQuery) -> Callable[[JobProgress], Supervisor]:
        """The maker of the supervisors of ``cluster``'s elements, each asking the scheduler through ``query``
        (its round query): made once per round query, what they share with it."""
        kept = self._makers.get(id(query))
        if kept is not None and kept[0] is query:
            return kept[1]

        def chosen(_cluster: str) -> Scheduler:
            return query
        if self._supervisors is not None:
            maker = self._supervisors(cluster=cluster, schedulers=chosen)
        else:
            def maker(progress: JobProgress) -> Supervisor:
                return self._supervisor(cluster=cluster, progress=progress, schedulers=chosen)
        self._makers[id(query)] = (query, maker)
        return maker

    def _first_pointers(self, taken: list[Taken]) -> None:
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


class _SweepPasses(PassHooks):
    """What a sweep, a pipeline or ``supervise --all`` adds to the pass loop: the line of jobs waiting to
    start under each sweep's --max-running, the gate of jobs held back until what they wait for is as they
    ask, each element's ending shown, the pointers a pass changed, and the sweeps' attendance."""

    def __init__(self, owner: SuperviseSweep, drain: Interrupts, view: SweepSupervisionView,
                 attendance: AttendanceNotes, gate: HeldBack, ends: list[ElementEnd], rounds: dict[str, RoundQuery],
                 elsewhere: list[tuple[JobId, str]], fresh: bool) -> None:
        self._owner = owner
        self._drain = drain
        self._view = view
        self._attendance = attendance
        self._ends = ends
        self._rounds = rounds
        self._elsewhere = elsewhere
        self._fresh = fresh
        self.passes: Passes  # the loop these hooks are of (set as it is made)
        self.waiting: deque[JobSummary] = deque()  # the line of jobs to start, in order
        self.bounds: dict[str, int | None] = {}  # each sweep's --max-running
        self.gate = gate  # jobs whose first create waits for other jobs: not taken yet

    def before(self, stopping: bool) -> None:
        """The held jobs whose gate opened put in the line; waiting ones started while there is room; every
        cluster's round query begins a new round."""
        owner, passes = self._owner, self.passes
        owner._open_gates(self.gate, self.waiting, self._ends, passes.active, stopping, self._drain, self._view,
                          self._rounds, self._elsewhere, passes.began, self._fresh)
        if not stopping:
            owner._fill(self.waiting, self.bounds, self._drain, self._fresh, self._view, self._rounds, passes.active,
                        self._elsewhere, passes.began)
        if passes.active:
            for query in self._rounds.values():
                query.new_round()

    def more(self, stopping: bool) -> bool:
        return _more_to_start(self.waiting, self.gate, stopping, self._drain, self._owner._clock.monotonic)

    def ended(self, element: Active, end: SupervisionEnd) -> None:
        self._ends.append(ElementEnd(element.job, end))
        self._view.ended(element.job, str(end.ending), end.state)

    def after(self, stopping: bool) -> None:
        self._owner._one.flush_pointers()  # what the pass's commits changed, in one batch
        self._view.refresh()
        if not stopping:
            self._attend()

    def room(self) -> bool:
        return room_for_next(self.waiting, self.passes.active, self.bounds)

    def refresh_at(self) -> datetime | None:
        return self._attendance.next_at()

    def next_at(self) -> float:
        return self.gate.next_at()

    def closed(self) -> None:
        self._owner._one.flush_pointers()  # what the last commits (a drain's) changed

    def _attend(self) -> None:
        """The sweep's attendance refreshed when due (every ten poll intervals), and with it the lock of every
        element carried on (``Supervisor.carry`` beats nothing) whose last beat announced its next loop before
        the next refresh: beaten now, announcing the refresh after that one, when it is beaten again. So each
        such lock is written once every twenty poll intervals (a job's own polls back off to 160 s) and still
        shows a live loop (display only: ``loop_stale``). A beat that fails steps its element next pass: a lost
        lock ends it there, having sent nothing more."""
        attendance, passes = self._attendance, self.passes
        began = passes.began
        before = attendance.next_at()
        if before is not None and began.wall < before:
            return  # not due (and what it would name is not worked out: it is every element's)
        attendance.refresh(held(passes.active), began.wall)
        until = attendance.next_at()
        if until is None or until == before:
            return
        announce = until + (until - began.wall)
        for element in passes.active.values():
            loop = element.loop
            if loop is None or (loop.announced is not None and loop.announced >= until):
                continue
            if not element.supervisor.carrying.beat_carried(loop, began.wall, announce):
                passes.must_step.add(element.job)


def _max_running(store: JobStore, waiting: deque[JobSummary]) -> dict[str, int | None]:
    """Each sweep's --max-running, from the first of its elements whose record reads."""
    bounds: dict[str, int | None] = {}
    for member in waiting:
        if member.sweep is None or member.sweep in bounds:
            continue
        try:
            spec = fold(store.read(member.job)).spec
        except (StoreError, JobsError):
            continue
        bounds[member.sweep] = spec.member.max_running if spec.member is not None else None
    return bounds


def _more_to_start(waiting: deque[JobSummary], gate: HeldBack, stopping: bool, drain: Interrupts,
                   monotonic: Callable[[], float]) -> bool:
    """With nothing supervised now: whether the loop goes on. It does while a job may still start: one in
    the line (every started one failed to start: the next ones are tried), or one held back whose gate may
    still open (what it waits for is read again when due, after a wait a signal ends)."""
    if stopping or not (waiting or gate.waiting):
        return False
    if not waiting:
        drain.wait(max(0.0, gate.due - monotonic()))
    return True


def _hold_back(gate: HeldBack, waiting: deque[JobSummary], view: SweepSupervisionView, fresh: SuperviseJob | None,
               on_problem: Callable[[str], None]) -> deque[JobSummary]:
    """``waiting`` less the jobs ``gate`` holds back, which the view names; ``fresh``: the supervision of one
    just recorded (its waiting jobs' pointers are written now, in one batch, so every login node finds
    them while they wait)."""
    held_out = gate.hold(waiting)
    if not held_out:
        return waiting
    if fresh is not None:
        _held_pointers(fresh, gate, on_problem)
    for line in _gate_lines(gate):
        view.line(line)
    view.held(gate.words())
    return deque(m for m in waiting if m.job not in held_out)


def _held_pointers(one: SuperviseJob, gate: HeldBack, on_problem: Callable[[str], None]) -> None:
    """The first pointers of the jobs held back as a fresh supervision starts, written in one batch."""
    try:
        one.write_pointers([one.first_pointer(m.job, m.cluster, m.adapter, m.recorded_at,
                                              JobId(m.sweep) if m.sweep is not None else None)
                            for m in gate.held.values()])
    except Exception as exc:  # display only; the record is what counts
        on_problem(f"pointers of {len(gate.held)} waiting jobs not written: {reason(exc)}")


def _as_held(members: list[JobSummary], held: dict[JobId, str]) -> list[JobSummary]:
    """``members`` with each job still held back shown by its gate's word (waiting, blocked)."""
    return [replace(m, state=held[m.job]) if m.job in held else m for m in members]
