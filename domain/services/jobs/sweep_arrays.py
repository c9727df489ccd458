"""A sweep's fresh elements sent as one job array: every phase's events of all elements committed in one
transaction (``JobStore.append_many``: one commit, one sync), each before the request that follows it.

Whatever fails on the way is left to each element's own loop (the engine's executor), which finds the attempt
unanswered and treats it as any job's: marked unknown, looked for by its name and nonce, never sent again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, CreateOutcome, ObjectSpec
from dunscaith.domain.model.jobs.state import apply, fold
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.model.shown import reason
from dunscaith.domain.services.jobs.supervise import new_nonce, output_paths
from dunscaith.domain.services.jobs.sweep_elements import Active, Pass, Taken, begin
from dunscaith.ports.clock import Clock
from dunscaith.ports.crash_points import CrashPoints
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_progress import SweepSupervisionView
from dunscaith.ports.job_store import Append, JobStore, LockLost, StoreError
from dunscaith.ports.scheduler import CreatesArrays, Scheduler, SchedulerError


def _array_elements(taken: list[Taken], nonce: Nonce) -> tuple[int | None, list[tuple[int, ObjectSpec]]]:
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


def fresh_by_sweep(waiting: deque[JobSummary]) -> dict[str, list[JobSummary]]:
    """The waiting elements with no attempt yet, by sweep, in their waiting order."""
    fresh_by_sweep: dict[str, list[JobSummary]] = {}
    for member in waiting:
        if member.sweep is not None and member.attempts == 0:
            fresh_by_sweep.setdefault(member.sweep, []).append(member)
    return fresh_by_sweep


class SweepArrays:
    """Each sweep whose fresh elements a scheduler can make in one request, sent so."""

    def __init__(self, store: JobStore, schedulers: Callable[[str], Scheduler], clock: Clock,
                 crash: CrashPoints) -> None:
        self._store = store
        self._schedulers = schedulers
        self._clock = clock
        self._crash = crash

    def __call__(self, waiting: deque[JobSummary], drain: Interrupts, view: SweepSupervisionView,
                 active: dict[JobId, Active], take: Callable[[list[JobSummary]], list[Taken]],
                 began: Pass, first_pointers: Callable[[list[Taken]], None]) -> None:
        """Each sweep whose fresh elements (no attempt yet) a scheduler can make in one request (a Slurm job
        array) is sent so, and its elements' loops started; the others stay waiting, each its own object."""
        for sweep, members in fresh_by_sweep(waiting).items():
            scheduler = self._array_scheduler(sweep, members, view)
            if scheduler is None:
                continue
            if drain.pending() is not None:
                return
            tried = {m.job for m in members}  # taken now, or said why not: none is tried again below
            remaining = [m for m in waiting if m.job not in tried]
            waiting.clear()
            waiting.extend(remaining)
            # taken together (their records read in one question), each fresh element's first pointer written with
            # all the others', not as it is taken
            taken = take(members)
            first_pointers(taken)
            # still fresh as their locks are held (a command may have acted on one since the summary was read)
            sent = [t for t in taken if not t.state.attempts and t.state.outcome is None and not t.state.settled]
            for t in taken:
                if t not in sent:
                    active[t.member.job] = begin(t, drain, began)
            if sent:
                try:
                    self._send_array(JobId(sweep), scheduler, sent, view, active)
                finally:
                    _tell(sent)
                for t in sent:
                    active[t.member.job] = begin(t, drain, began)

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
        if fold(self._store.read(members[0].job)).spec.script is None:
            return []
        records = self._store.read_many([m.job for m in members])  # one question, not one an element
        return [fold(records[m.job]).spec.script for m in members]  # (KeyError: one does not read, as its read)

    def _send_array(self, sweep: JobId, scheduler: CreatesArrays, taken: list[Taken], view: SweepSupervisionView,
                    active: dict[JobId, Active]) -> None:
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

    def _release_array(self, array: ObjectId, taken: list[Taken], tasks: list[ObjectId]) -> bool:
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

    def _append_all(self, taken: list[Taken], events: list[ev.Event], point: str) -> bool:
        """Each element's event of the array's phase made durable in one transaction (their states carried
        on), or none of them and False."""
        now = self._clock.now()
        try:
            once = {id(event): ev.encode(event) for event in events}  # a phase's one event (submitting) encoded once
            encoded = [once[id(event)] for event in events]
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


def _tell(taken: list[Taken]) -> None:
    """Each element's pointer and live line told its state once the array's phases are done, not at each
    phase: a pointer write is synced (a 500-element array's 1,500 phase writes took 20 of its 38 s on a
    loaded test machine), and a pointer is display only, here a moment behind its record."""
    for t in taken:
        if t.untold is not None:
            t.progress.committed(t.state, t.untold)
            t.untold = None

