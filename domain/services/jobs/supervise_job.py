"""One supervision of a job, from the command line's ``submit``, ``supervise`` and ``reconcile``: the record
read once, where the job may be acted on, the pointer, the lock, the sweep as supervision starts, the
supervisor, and where the job's output is when it ends.

The command gives only what it knows (the job, whether it was just recorded, the live view, a bound);
everything else is a port given to the constructor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from dunscaith.domain.model.jobs.dependencies import Blocked, Ready
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.job_result import JobResult, RecordPlace, job_result
from dunscaith.domain.model.jobs.pointer import Pointer, PointerError
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.settlement import Outstanding
from dunscaith.domain.model.jobs.state import JobState, fold, label
from dunscaith.domain.model.shown import reason
from dunscaith.domain.services.jobs.gates import Gates
from dunscaith.domain.services.jobs.job_output import JobOutputs, OutputTail
from dunscaith.domain.services.jobs.owning_host import Owner, OwningHost
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.pointer_notes import AttendanceNotes, Fanout, PointerBatch, PointerNotes
from dunscaith.domain.services.jobs.supervise import Ending, SupervisionEnd, Supervisor
from dunscaith.domain.services.jobs.sweep import Sweep, SweepReport
from dunscaith.domain.services.jobs.sweep_lock import refuse_if_supervised
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_progress import JobProgress, SupervisionView
from dunscaith.ports.job_store import JobStore
from dunscaith.ports.pointers import Pointers

GATE_POLL = 1.0  # seconds between readings of what a waiting job waits for (its records only)


class BoundElsewhere(JobsError):
    """The job's objects are processes of another host (a local-scheduler job in a shared store): it is
    acted on there, by ``owner``."""

    def __init__(self, state: JobState, owner: Owner) -> None:
        super().__init__(f"job {state.name} runs on the local scheduler of host {owner.host}: run the command there")
        self.state = state
        self.owner = owner


@dataclass(frozen=True, slots=True)
class Supervised:
    end: SupervisionEnd
    view: SupervisionView  # the live view it was shown in (its lines go on after the end)
    stdout: str | None = None  # where the job's output is, once it has an outcome
    stderr: str | None = None
    stderr_tail: tuple[str, ...] = ()  # the last lines of its stderr, when it did not succeed
    result: JobResult | None = None  # what a script reads of it (--json); None when the record had no state
    output_tails: tuple[OutputTail, ...] = ()  # the end of its output, once it has an outcome


def _waits(state: JobState) -> bool:
    """A job that waits for others (``submit --after``) and is not created yet."""
    return bool(state.spec.waits) and not state.attempts and state.outcome is None


class _Gate:
    """A job that waits for others, not created yet, held in the pass loop (``passes.Gate``) until the rule
    says it may be created, reading only the records of what it waits for (no scheduler query) every
    ``GATE_POLL``: it blocks it (the ending BLOCKED: nothing was created), a signal drains it, or ``bound``
    passes (reconcile: outstanding). Its lock is held meanwhile: no other supervisor creates it either."""

    def __init__(self, gates: Gates, state: JobState, drain: Interrupts, view: SupervisionView,
                 bound: float | None) -> None:
        self._gates = gates
        self._state = state
        self._drain = drain
        self._view = view
        self._bound = bound
        self._said = ""
        self._waited = 0.0
        self._asked = False

    def held(self, stopping: bool) -> SupervisionEnd | bool:
        """Whether the job is still held (False: it may be created now), or how its supervision ends."""
        state, said = self._state, self._said
        if self._asked and stopping:  # the wait for the next reading ended with a stop
            return SupervisionEnd(Ending.DRAINED, state, detail=said)
        self._asked = True
        answer = self._gates.readiness(state.spec)
        if isinstance(answer, Ready):
            if said:
                self._view.line("ready: every job it waits for is as it asks; creating it")
            return False
        if isinstance(answer, Blocked):
            self._view.line(answer.line())
            return SupervisionEnd(Ending.BLOCKED, state, detail=answer.line())
        if answer.line() != said:
            said = self._said = answer.line()
            self._view.line(f"{said} (nothing is sent until it has its outcome)")
        if self._bound is not None and self._waited >= self._bound:
            return SupervisionEnd(Ending.OUTSTANDING, state, (Outstanding(0, said),), detail=said)
        if stopping:  # a stop already requested: the wait would end at once with it
            return SupervisionEnd(Ending.DRAINED, state, detail=said)
        return True

    def wait(self) -> None:
        """Until the next reading (a signal ends it)."""
        self._drain.wait(GATE_POLL)
        self._waited += GATE_POLL


class SuperviseJob:
    def __init__(self, store: JobStore, pointers: Pointers, owning: OwningHost, here: HostIdentity, binary: str,
                 supervisor: Callable[..., Supervisor], views: Callable[..., SupervisionView], sweep: Sweep,
                 outputs: JobOutputs, poll: float, on_problem: Callable[[str], None],
                 on_sweep: Callable[[SweepReport], None]) -> None:
        self._store = store
        self._pointers = pointers
        self._owning = owning
        self._here = here
        self._binary = binary  # this dunscaith's path: a new pointer names it
        self._supervisor = supervisor  # (cluster=, progress=) -> the supervisor of one job
        self._views = views  # (job=, and the command's display options) -> the live view of one supervision
        self._sweep = sweep
        self._outputs = outputs
        self._poll = poll
        self._on_problem = on_problem  # display only: a pointer not written, a sweep that could not run
        self._on_sweep = on_sweep
        # the pointers of the elements one pass steps, written together when it ends (flush_pointers)
        self._batch = PointerBatch(pointers, on_problem)

    def __call__(self, job: JobId, drain: Interrupts, *, fresh: bool, bound: float | None = None,
                 **display: object) -> Supervised:
        """Supervise ``job`` to an ending (``fresh``: it was just recorded). UnknownJob, RecordDamaged or
        a JobsError when its record does not read; BoundElsewhere when another host acts on it; LockBusy
        while another supervisor holds it (SweepSupervisedElsewhere while one supervises its sweep).
        ``bound``: stop after that long with what is left (reconcile).
        ``display``: how the command shows the live view (its stream, whether the output is followed)."""
        record = self._store.read(job)
        state = fold(record)
        owner = self._owning.of_record(state)
        if owner is not None:
            raise BoundElsewhere(state, owner)
        if state.spec.member is not None:  # an element its sweep's live supervisor may be waiting to start
            refuse_if_supervised(self._store, state.spec.member.sweep)
        if state.spec.step_of is not None:  # a step its pipeline's live supervisor holds back, or runs
            refuse_if_supervised(self._store, state.spec.step_of.pipeline, "pipeline")
        pointer = self._current_pointer(state)
        if fresh:
            try:
                self._pointers.write(pointer)
            except Exception as exc:  # display only; the record is what counts
                self._on_problem(f"pointer of {job} not written: {reason(exc)}")
        notes = PointerNotes(self._pointers, pointer, self._poll, on_problem=self._on_problem)
        view = self._views(job=job, **display)
        progress: JobProgress = Fanout([view, notes])
        supervisor = self._supervisor(cluster=state.spec.cluster, progress=progress)
        with self._store.lock(job) as lock, view:
            view.show(state)
            self._sweep_now()  # as supervision starts: objects nobody owns are stopped before they start
            if not fresh and state.settled and state.outcome is not None:
                view.line(f"already done: outcome {state.outcome.kind} ({state.outcome.detail})")
            elif not fresh:
                view.line(f"supervising again (attempts so far: {len(state.attempts)}; now {label(state)})")
            gate = _Gate(Gates(self._store), state, drain, view, bound) if _waits(state) else None
            end = supervise_one(supervisor, job, lock, drain, bound=bound, first=(state, len(record.events)),
                                gate=gate)
        return self._with_outputs(end, view)

    def for_command(self, state: JobState) -> Supervisor:
        """The supervisor a job command acts with under the lock (no live supervisor holds it); it keeps
        the pointer's last state."""
        notes = PointerNotes(self._pointers, self._current_pointer(state), self._poll, on_problem=self._on_problem)
        return self._supervisor(cluster=state.spec.cluster, progress=notes)

    # --- what a sweep's supervision (supervise_sweep.py) shares with one job's

    def owner_elsewhere(self, state: JobState) -> str | None:
        """The host that acts on this job when it is not this one (a local-scheduler job of another host)."""
        owner = self._owning.of_record(state)
        return owner.host if owner is not None else None

    def pointer_for(self, state: JobState) -> Pointer:
        return self._current_pointer(state)

    def write_pointer(self, pointer: Pointer) -> None:
        self._pointers.write(pointer)

    def write_pointers(self, pointers: list[Pointer]) -> None:
        """Many jobs' pointers written at once (a sweep's fresh elements): one sync for them all."""
        self._pointers.write_many(pointers)

    def attendance_notes(self) -> AttendanceNotes:
        """A sweep supervisor's attendances, in place of each element's supervised-at refresh."""
        return AttendanceNotes(self._pointers, self._poll, self._here.hostname, on_problem=self._on_problem)

    def pointer_notes(self, pointer: Pointer) -> JobProgress:
        """The pointer of one of the many jobs a pass steps, kept in step with what its supervisor commits:
        written with the others' when the pass ends (``flush_pointers``)."""
        return PointerNotes(self._batch, pointer, self._poll, on_problem=self._on_problem)

    def flush_pointers(self) -> None:
        """The pointers the pass's jobs changed, written in one batch (display only: a failure is said)."""
        self._batch.flush()

    def sweep_now(self) -> None:
        """The sweep of objects nobody owns, as a supervision starts; its failure is only said."""
        self._sweep_now()

    def _current_pointer(self, state: JobState) -> Pointer:
        """The job's pointer as written, or a new one when there is none to use."""
        try:
            return self._pointers.read(state.name)
        except PointerError:  # display only: no pointer, a damaged one, an unreadable home
            return self.first_pointer(state.name, state.spec.cluster, state.spec.adapter, state.recorded_at,
                                      state.spec.member.sweep if state.spec.member is not None else None)

    def first_pointer(self, job: JobId, cluster: str, adapter: str, recorded_at: datetime,
                      sweep: JobId | None) -> Pointer:
        """A just-recorded job's first pointer (a pipeline's waiting steps get theirs as it is submitted,
        so every login node finds them before they start)."""
        host = self._store.identity().host or self._here
        return Pointer(job=job, host=host.hostname, record_root=self._store.location(), root_host=host,
                       binary=self._binary, cluster=cluster, adapter=adapter, state="recorded",
                       state_at=recorded_at, supervised_at=None, sweep=sweep)

    def _sweep_now(self) -> None:
        try:
            done = self._sweep()
        except Exception as exc:  # a sweep rides on a command and never stops it
            self._on_problem(f"sweep not run: {reason(exc)}")
            return
        self._on_sweep(done)

    def _with_outputs(self, end: SupervisionEnd, view: SupervisionView) -> Supervised:
        state = end.state
        if state is None:
            return Supervised(end, view)
        current = state.current
        if state.outcome is None or current is None or current.object_id is None:
            stdout, stderr = (current.stdout, current.stderr) if current is not None else (None, None)
            return Supervised(end, view, result=job_result(state, stdout, stderr, self._place(state)))
        stdout, stderr = self._outputs.paths(state.spec.cluster, current)
        return Supervised(end, view, stdout, stderr, self._outputs.failure_tail(state, stderr),
                          job_result(state, stdout, stderr, self._place(state)),
                          self._outputs.ending_tails(state, stdout, stderr))

    def _place(self, state: JobState) -> RecordPlace:
        """Where the record is: the store, and the host it is bound to (a store shared by login nodes is
        bound to none: the host that recorded the job, else this one)."""
        try:
            identity = self._store.identity()
            location = self._store.location()
        except Exception:  # display only
            return RecordPlace(store="", backend="", host=state.host or self._here.hostname)
        bound = identity.host.hostname if identity.host is not None else None
        return RecordPlace(store=location, backend=identity.backend, host=bound or state.host or self._here.hostname)
