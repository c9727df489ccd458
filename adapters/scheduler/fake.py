"""``FakeScheduler``: an in-memory scheduler with scripted faults, for supervisor and contract tests.

It keeps the same contract as the real schedulers (``tests/contract/test_scheduler.py``):

- ``create_held`` makes a HELD object carrying the spec's name and nonce and answers with its id;
- ``release`` of a held object makes it PENDING; of any object already released it does nothing
  (a release never starts an object twice); of one cancelled before it started it raises;
- ``hold`` of a held or pending object makes it HELD; of a started or ended one it raises;
- ``cancel`` of a not-started object ends it CANCELLED at once; of a running one too (or STOPPING
  first, with ``gradual_cancel``); of an ended one it does nothing;
- ``requeue`` of a started or ended object puts it back PENDING (Slurm's meaning);
- ``query`` answers for many names in one call, foreign objects included (the caller judges them);
  ``confirm_absent`` changes nothing: the fake forgets an object only when told to (``vanish``);
- ``cancel_if_not_started`` cancels each id that is this owner's and held or pending right now (as
  Slurm's ``scancel --state=PENDING``: a requeued object pending again counts), and skips the rest;
- ``stop_by_name`` cancels every object of that name this owner has, running ones too;
- ``times`` is when the fake saw each object made, first running and ended (the wall clock), for the
  ids it knows;
- ``output_paths`` is what ``set_output_paths`` said for the object (both None by default), None
  for an id it does not know;
- an id the scheduler does not know raises ``SchedulerError`` on every action.

Nothing runs by itself unless ``exit_code_of`` is given: then every query first moves each released
object one step (PENDING → RUNNING → ended with the exit code ``exit_code_of(spec)`` returns, or
still RUNNING when it returns None), the way a real scheduler moves between two polls.

Faults are scripted before the call they affect: ``lose_next_create_reply`` (the object is made
but the answer says UNKNOWN), ``refuse_next_create``, ``fail_next_query`` (complete=False),
``fail_next`` (an action or a ``cancel_if_not_started`` raises, before or after taking effect),
``vanish`` (an object disappears from queries and actions, as Slurm forgets finished jobs), and
``add_foreign`` (another owner's object, or one with the job's name and a nonce nobody knows).
States move by hand with ``start``, ``finish``, ``kill``, ``fail_node``, ``preempt``, ``set_state``.

Every call is counted: ``calls`` (method → count) and ``log`` (method, argument) in order, so a test
can assert "released once" with ``count("release", object_id)``.
"""

from __future__ import annotations

import getpass
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import (
    ENDED,
    NOT_STARTED,
    CreateAnswer,
    CreateOutcome,
    ObjectSpec,
    ObjectState,
    ObjectTimes,
    ObjectView,
    OutputPaths,
    QueryResult,
)
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.ports.scheduler import SchedulerError

_ACTIONS = ("release", "hold", "requeue", "cancel", "cancel_if_not_started")


@dataclass(slots=True)
class FakeObject:
    """One object as the fake keeps it; ``view`` is what a query reports."""

    spec: ObjectSpec | None  # None for a foreign object made by ``add_foreign``
    view: ObjectView
    vanished: bool = False
    releases: int = 0  # how many times it went from HELD to PENDING
    output: OutputPaths = field(default_factory=lambda: OutputPaths(None, None))
    submitted_at: datetime | None = None  # the scheduler's own times (``times``), stamped as the state moves
    started_at: datetime | None = None
    ended_at: datetime | None = None

    def stamp(self, now: datetime) -> None:
        if self.started_at is None and (self.view.started or self.view.state is ObjectState.RUNNING):
            self.started_at = now
        if self.view.state in ENDED:
            self.ended_at = self.ended_at or now
        else:
            self.ended_at = None


@dataclass(frozen=True, slots=True)
class _ActionFault:
    detail: str
    applied: bool  # True: the action took effect and then the reply was lost


class FakeScheduler:
    def __init__(
        self,
        *,
        owner: str | None = None,
        exit_code_of: Callable[[ObjectSpec], int | None] | None = None,
        gradual_cancel: bool = False,
        id_prefix: str = "fake-",
    ) -> None:
        self.owner = owner if owner is not None else getpass.getuser()
        self._exit_code_of = exit_code_of
        self._gradual_cancel = gradual_cancel
        self._prefix = id_prefix
        self._lock = threading.RLock()
        self._objects: dict[ObjectId, FakeObject] = {}
        self._next = 0
        self._create_faults: list[CreateAnswer] = []
        self._query_faults: list[str] = []
        self._action_faults: dict[str, list[_ActionFault]] = {}
        self.calls: Counter[str] = Counter()
        self.log: list[tuple[str, object]] = []
        self.refuse_needs: str | None = None  # what refusal() says (a test sets it)
        # how an object that runs ends instead of by its exit code (out_of_memory, timeout), or None: by its code
        self.end_state_of: Callable[[ObjectSpec], ObjectState | None] | None = None

    # ------------------------------------------------------------------ the port

    def refusal(self, resources: Resources, options: Sequence[str]) -> str | None:
        """A fake honours every need and option, unless a test scripted a refusal."""
        return self.refuse_needs

    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        with self._lock:
            self._count("create_held", spec.name)
            if self._create_faults:
                scripted = self._create_faults.pop(0)
                if scripted.outcome is CreateOutcome.REFUSED:
                    return scripted
                self._make(spec)  # UNKNOWN: the object exists, only the answer was lost
                return replace(scripted, detail=scripted.detail or "the reply was lost after the object was made")
            return CreateAnswer(CreateOutcome.CREATED, self._make(spec))

    def release(self, object_id: ObjectId) -> None:
        with self._acting("release", object_id) as obj:
            if obj.view.state is ObjectState.CANCELLED and not obj.view.started:
                raise SchedulerError(f"{object_id} was cancelled; it will never start")
            if obj.view.state is ObjectState.HELD:
                obj.releases += 1
                self._set(obj, ObjectState.PENDING)

    def hold(self, object_id: ObjectId) -> None:
        with self._acting("hold", object_id) as obj:
            if obj.view.state not in NOT_STARTED:
                raise SchedulerError(f"{object_id} is {obj.view.state}; only a held or pending object can be held")
            self._set(obj, ObjectState.HELD)

    def requeue(self, object_id: ObjectId) -> None:
        with self._acting("requeue", object_id) as obj:
            if obj.view.state in NOT_STARTED:
                raise SchedulerError(f"{object_id} is {obj.view.state}; only a started object can be requeued")
            obj.view = replace(obj.view, state=ObjectState.PENDING, exit_code=None, signal=None, reason="requeued")
            obj.stamp(datetime.now(UTC))

    def cancel(self, object_id: ObjectId) -> None:
        with self._acting("cancel", object_id) as obj:
            self._cancel(obj)

    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        with self._lock:
            self._count("query", tuple(names))
            if self._query_faults:
                return QueryResult((), complete=False, detail=self._query_faults.pop(0))
            self._step_all()
            wanted = set(names)
            found = tuple(o.view for o in self._objects.values() if not o.vanished and o.view.name in wanted)
            return QueryResult(found, complete=True)

    def cancel_if_not_started(self, object_ids: Sequence[ObjectId]) -> list[ObjectId]:
        with self._lock:
            self._count("cancel_if_not_started", tuple(object_ids))
            fault = self._fault("cancel_if_not_started")
            if fault and not fault.applied:
                raise SchedulerError(fault.detail)
            stopped: list[ObjectId] = []
            for object_id in dict.fromkeys(object_ids):
                obj = self._objects.get(object_id)
                if obj is None or obj.vanished or obj.view.owner != self.owner:
                    continue
                if obj.view.state in NOT_STARTED:
                    self._set(obj, ObjectState.CANCELLED)
                    stopped.append(object_id)
            if fault:
                raise SchedulerError(f"{fault.detail} (stopped {', '.join(stopped) or 'nothing'})")
            return stopped

    def stop_by_name(self, name: JobId) -> list[ObjectId]:
        with self._lock:
            self._count("stop_by_name", name)
            stopped: list[ObjectId] = []
            for object_id, obj in self._objects.items():
                if obj.vanished or obj.view.name != name or obj.view.owner != self.owner:
                    continue
                if obj.view.state not in ENDED:
                    self._cancel(obj)
                    stopped.append(object_id)
            return stopped

    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        """Nothing announces a change here but a query: False at once (the caller sleeps to its poll)."""
        return False

    def output_paths(self, object_id: ObjectId) -> OutputPaths | None:
        with self._lock:
            self._count("output_paths", object_id)
            obj = self._objects.get(object_id)
            return None if obj is None or obj.vanished else obj.output

    def times(self, object_ids: Sequence[ObjectId]) -> dict[ObjectId, ObjectTimes]:
        """The times the fake stamped as each object's state moved (the wall clock's), for ids it knows."""
        with self._lock:
            self._count("times", tuple(object_ids))
            found = {oid: self._objects.get(oid) for oid in object_ids}
            return {oid: ObjectTimes(obj.submitted_at, obj.started_at, obj.ended_at, "fake")
                    for oid, obj in found.items() if obj is not None and not obj.vanished}

    @property
    def user(self) -> str:
        return self.owner

    # ------------------------------------------------------------------ scripted faults

    def lose_next_create_reply(self, detail: str = "") -> None:
        """The next create makes its object but answers UNKNOWN, as a client killed by a timeout."""
        with self._lock:
            self._create_faults.append(CreateAnswer(CreateOutcome.UNKNOWN, None, detail))

    def refuse_next_create(self, detail: str = "refused by the fake scheduler") -> None:
        """The next create makes nothing and answers REFUSED."""
        with self._lock:
            self._create_faults.append(CreateAnswer(CreateOutcome.REFUSED, None, detail))

    def fail_next_query(self, detail: str = "the fake scheduler did not answer") -> None:
        """The next query answers nothing, complete=False."""
        with self._lock:
            self._query_faults.append(detail)

    def fail_next(self, action: str, detail: str = "the fake scheduler failed", *, applied: bool = False) -> None:
        """The next ``action`` (release, hold, requeue, cancel, cancel_if_not_started) raises SchedulerError.

        With ``applied`` the action takes effect first and only its reply is lost.
        """
        if action not in _ACTIONS:
            raise ValueError(f"fail_next: {action!r} is not one of {', '.join(_ACTIONS)}")
        with self._lock:
            self._action_faults.setdefault(action, []).append(_ActionFault(detail, applied))

    def set_output_paths(self, object_id: ObjectId, paths: OutputPaths) -> None:
        """What ``output_paths`` answers for this object."""
        with self._lock:
            self._objects[object_id].output = paths

    def vanish(self, object_id: ObjectId) -> None:
        """The object drops out of queries and actions (a scheduler that forgot it)."""
        with self._lock:
            self._objects[object_id].vanished = True

    def reappear(self, object_id: ObjectId) -> None:
        with self._lock:
            self._objects[object_id].vanished = False

    def add_foreign(
        self,
        name: JobId,
        *,
        owner: str | None = None,
        nonce: Nonce | None = None,
        state: ObjectState = ObjectState.HELD,
    ) -> ObjectId:
        """An object this supervisor did not make: another owner's, or its job's name with an unknown nonce."""
        with self._lock:
            object_id = self._new_id()
            view = ObjectView(
                object_id=object_id,
                name=name,
                nonce=nonce,
                state=state,
                owner=owner if owner is not None else self.owner,
                started=state not in NOT_STARTED,
            )
            self._objects[object_id] = FakeObject(spec=None, view=view)
            return object_id

    # ------------------------------------------------------------------ moving states by hand

    def start(self, object_id: ObjectId) -> None:
        with self._lock:
            self._set(self._objects[object_id], ObjectState.RUNNING)

    def finish(self, object_id: ObjectId, exit_code: int = 0) -> None:
        with self._lock:
            obj = self._objects[object_id]
            state = ObjectState.COMPLETED if exit_code == 0 else ObjectState.FAILED
            obj.view = replace(obj.view, state=state, exit_code=exit_code, signal=None, started=True)
            obj.stamp(datetime.now(UTC))

    def kill(self, object_id: ObjectId, signal: int) -> None:
        """The worker ended by a signal (FAILED with ``signal``)."""
        with self._lock:
            obj = self._objects[object_id]
            obj.view = replace(obj.view, state=ObjectState.FAILED, exit_code=None, signal=signal, started=True)
            obj.stamp(datetime.now(UTC))

    def fail_node(self, object_id: ObjectId) -> None:
        self.set_state(object_id, ObjectState.NODE_FAIL, reason="node failure")

    def preempt(self, object_id: ObjectId) -> None:
        self.set_state(object_id, ObjectState.PREEMPTED, reason="preempted")

    def set_state(self, object_id: ObjectId, state: ObjectState, *, reason: str = "") -> None:
        with self._lock:
            obj = self._objects[object_id]
            started = obj.view.started or state not in NOT_STARTED | {ObjectState.CANCELLED}
            obj.view = replace(obj.view, state=state, reason=reason, started=started)
            obj.stamp(datetime.now(UTC))

    # ------------------------------------------------------------------ inspection

    def count(self, method: str, argument: object | None = None) -> int:
        """How many times ``method`` was called (with ``argument``, when given)."""
        with self._lock:
            if argument is None:
                return self.calls[method]
            return sum(1 for m, a in self.log if m == method and a == argument)

    def get(self, object_id: ObjectId) -> FakeObject:
        with self._lock:
            return self._objects[object_id]

    def objects(self) -> dict[ObjectId, FakeObject]:
        """Every object made, vanished ones included."""
        with self._lock:
            return dict(self._objects)

    def released_times(self, object_id: ObjectId) -> int:
        """How many times this object went from HELD to PENDING."""
        with self._lock:
            return self._objects[object_id].releases

    # ------------------------------------------------------------------ internals

    def _count(self, method: str, argument: object) -> None:
        self.calls[method] += 1
        self.log.append((method, argument))

    def _new_id(self) -> ObjectId:
        self._next += 1
        return ObjectId(f"{self._prefix}{self._next}")

    def _make(self, spec: ObjectSpec) -> ObjectId:
        object_id = self._new_id()
        view = ObjectView(
            object_id=object_id, name=spec.name, nonce=spec.nonce, state=ObjectState.HELD, owner=self.owner
        )
        self._objects[object_id] = FakeObject(spec=spec, view=view, submitted_at=datetime.now(UTC))
        return object_id

    def _known(self, object_id: ObjectId) -> FakeObject:
        obj = self._objects.get(object_id)
        if obj is None or obj.vanished:
            raise SchedulerError(f"no object {object_id}")
        if obj.view.owner != self.owner:
            raise SchedulerError(f"{object_id} belongs to {obj.view.owner}; not yours to change")
        return obj

    @contextmanager
    def _acting(self, action: str, object_id: ObjectId) -> Iterator[FakeObject]:
        """One action on a known object of this owner, under the lock and its scripted fault: a fault not
        applied raises before the change; an applied one raises after it (the change stands, its answer lost)."""
        with self._lock:
            self._count(action, object_id)
            obj = self._known(object_id)
            fault = self._fault(action)
            if fault and not fault.applied:
                raise SchedulerError(fault.detail)
            yield obj
            if fault:
                raise SchedulerError(fault.detail)

    def _fault(self, action: str) -> _ActionFault | None:
        queue = self._action_faults.get(action)
        return queue.pop(0) if queue else None

    def _set(self, obj: FakeObject, state: ObjectState) -> None:
        obj.view = replace(obj.view, state=state, started=obj.view.started or state is ObjectState.RUNNING)
        obj.stamp(datetime.now(UTC))

    def _cancel(self, obj: FakeObject) -> None:
        state = obj.view.state
        if state in ENDED:
            return
        if state is ObjectState.RUNNING and self._gradual_cancel:
            self._set(obj, ObjectState.STOPPING)
        elif state is not ObjectState.STOPPING:
            self._set(obj, ObjectState.CANCELLED)

    def _step_all(self) -> None:
        for obj in self._objects.values():
            state = obj.view.state
            if state is ObjectState.STOPPING:
                self._set(obj, ObjectState.CANCELLED)
            elif self._exit_code_of is None or obj.spec is None:
                continue
            elif state is ObjectState.PENDING:
                self._set(obj, ObjectState.RUNNING)
            elif state is ObjectState.RUNNING:
                code = self._exit_code_of(obj.spec)
                if code is not None:
                    ended = ObjectState.COMPLETED if code == 0 else ObjectState.FAILED
                    ended = (self.end_state_of(obj.spec) if self.end_state_of is not None else None) or ended
                    obj.view = replace(obj.view, state=ended, exit_code=code)
                    obj.stamp(datetime.now(UTC))


class FakeArrayScheduler(FakeScheduler):
    """The fake scheduler with job arrays (``CreatesArrays``), as Slurm has them: one request makes a held
    array whose tasks are objects ``<array>_<index>``, each named by its element; releasing the array's id
    releases every task; at most ``max_running`` of its tasks run at once."""

    def __init__(self, *, max_array_size: int = 1001, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_array_size = max_array_size
        self._arrays: dict[ObjectId, tuple[list[ObjectId], int | None]] = {}  # id -> (tasks, max running)

    def array_refusal(self, count: int, largest_index: int, scripts: Sequence[str | None] = ()) -> str | None:
        # as Slurm's: the #SBATCH lines are the whole array's options
        if len({tuple(line for line in (s or "").splitlines() if line.startswith("#SBATCH")) for s in scripts}) > 1:
            return "the elements' scripts carry different #SBATCH lines"
        if largest_index >= self.max_array_size:
            return f"index {largest_index} is above the cluster's MaxArraySize ({self.max_array_size})"
        return None

    def create_array_held(self, sweep: JobId, elements: Sequence[tuple[int, ObjectSpec]],
                          max_running: int | None) -> CreateAnswer:
        with self._lock:
            self._count("create_array_held", sweep)
            array_id = self._new_id()
            scripted = self._create_faults.pop(0) if self._create_faults else None
            if scripted is not None and scripted.outcome is CreateOutcome.REFUSED:
                return scripted
            tasks = []
            for index, spec in elements:
                task = self.task_object(array_id, index)
                view = ObjectView(object_id=task, name=spec.name, nonce=spec.nonce, state=ObjectState.HELD,
                                  owner=self.owner)
                self._objects[task] = FakeObject(spec=spec, view=view, submitted_at=datetime.now(UTC))
                tasks.append(task)
            self._arrays[array_id] = (tasks, max_running)
            if scripted is not None:  # UNKNOWN: the array exists, only the answer was lost
                return replace(scripted, detail=scripted.detail or "the reply was lost after the array was made")
            return CreateAnswer(CreateOutcome.CREATED, array_id)

    def task_object(self, array_id: ObjectId, index: int) -> ObjectId:
        return ObjectId(f"{array_id}_{index}")

    def release(self, object_id: ObjectId) -> None:
        with self._lock:
            array = self._arrays.get(object_id)
            if array is None:
                super().release(object_id)
                return
            self._count("release", object_id)
            for task in array[0]:
                obj = self._objects[task]
                if obj.view.state is ObjectState.HELD:
                    obj.releases += 1
                    self._set(obj, ObjectState.PENDING)

    def running_at_most(self, array_id: ObjectId) -> int | None:
        return self._arrays[array_id][1]

    def _step_all(self) -> None:
        # a throttled array's pending tasks wait while as many of its tasks run as it allows (JobArrayTaskLimit)
        waiting: list[FakeObject] = []
        for tasks, most in self._arrays.values():
            if most is None:
                continue
            running = sum(1 for t in tasks if self._objects[t].view.state is ObjectState.RUNNING)
            pending = [self._objects[t] for t in tasks if self._objects[t].view.state is ObjectState.PENDING]
            waiting += pending[max(most - running, 0):]
        for obj in waiting:
            obj.view = replace(obj.view, state=ObjectState.HELD)  # kept back for this step only
        try:
            super()._step_all()
        finally:
            for obj in waiting:
                obj.view = replace(obj.view, state=ObjectState.PENDING)
