"""One scheduler query a round for every job one process supervises (a sweep's elements).

Each element's supervisor asks about its own job when its poll is due; the first of a round asks the
scheduler about every job the process supervises, and the others of the same round are answered from
that answer, each seeing only its own objects. A round is one pass of the process's loop over the jobs
that woke together (their polls fall on the same ticks: domain/model/jobs/polling.py), so a sweep of 500
running elements asks one ``squeue`` (and one ``sacct`` for the absent) per poll interval, not 500.

An answer asked before an element's own action says nothing about that action (``asked_at``): that
element's supervisor then asks again in a later round, never on this answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import (
    CreateAnswer,
    ObjectSpec,
    ObjectTimes,
    ObjectView,
    OutputPaths,
    QueryResult,
)
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.ports.clock import Clock
from dunscaith.ports.scheduler import ChangeWatch, Scheduler, WatchesChanges


class RoundQuery:
    """A ``Scheduler`` whose confirming queries are answered once a round for every name ``names()`` gives;
    every other call goes straight through."""

    def __init__(self, inner: Scheduler, names: Callable[[], Sequence[JobId]], clock: Clock) -> None:
        self._inner = inner
        self._names = names  # the jobs supervised now: one round's query asks about all of them
        self._clock = clock
        self._answer: QueryResult | None = None
        self._asked_mono = 0.0  # monotonic: when that answer was asked
        self._covers: frozenset[str] = frozenset()
        self._by_name: dict[str, tuple[ObjectView, ...]] = {}  # the answer's objects by name (one pass a round)
        self.asked = 0  # queries sent to the scheduler (the sweep benchmark counts them)
        # a job array whose every task's creation is durable in its element's record: task -> array
        self._whole: dict[ObjectId, ObjectId] = {}
        self._released: set[ObjectId] = set()  # arrays released whole
        self._may: dict[ObjectId, Callable[[], bool]] = {}

    def new_round(self) -> None:
        """A new pass of the loop: the next confirming query asks the scheduler afresh."""
        self._answer = None

    def older_than(self, moment: float) -> None:
        """A job's object was seen to change before ``moment`` (monotonic): an answer asked before then says
        nothing of that change, so the next confirming query asks afresh."""
        if self._answer is not None and self._asked_mono < moment:
            self._answer = None

    @property
    def user(self) -> str:
        return self._inner.user

    def refusal(self, resources: Resources, options: Sequence[str]) -> str | None:
        return self._inner.refusal(resources, options)

    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        return self._inner.create_held(spec)

    def whole_array(self, array_id: ObjectId, tasks: Mapping[ObjectId, ObjectId], may: Callable[[], bool]) -> None:
        """Every task of ``array_id`` is known (its creation durable in its element's record): the first
        element's release releases them all in one request, when ``may`` says so then (no element of it
        asked to stay held), and each other element's first release is then already done."""
        self._whole.update(tasks)
        self._may[array_id] = may

    def release(self, object_id: ObjectId) -> None:
        array = self._whole.pop(object_id, None)
        if array is None:
            self._inner.release(object_id)
            return
        if array not in self._released and not self._may[array]():
            for task in [t for t, a in self._whole.items() if a == array]:
                del self._whole[task]  # one element asked to stay held: each is released on its own
            self._inner.release(object_id)
            return
        if array not in self._released:
            try:
                self._inner.release(array)
            except BaseException:
                self._whole[object_id] = array  # not released: this element asks again
                raise
            self._released.add(array)

    def hold(self, object_id: ObjectId) -> None:
        self._inner.hold(object_id)

    def requeue(self, object_id: ObjectId) -> None:
        self._inner.requeue(object_id)

    def cancel(self, object_id: ObjectId) -> None:
        self._inner.cancel(object_id)

    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        if not confirm_absent:
            return self._inner.query(names, confirm_absent=False)
        answer = self._round(names)
        objects = tuple(o for name in dict.fromkeys(names) for o in self._by_name.get(name, ()))
        return replace(answer, objects=objects)

    def round_answer(self, name: JobId) -> tuple[QueryResult, tuple[ObjectView, ...]]:
        """This round's answer (asked now if the round has none covering ``name``, exactly as ``query``
        would) and ``name``'s objects in it, in the order ``query`` gives them, without a copy of the answer
        for each job (a sweep's loop looks at every quiet element's this way, ``Carrying.carry``)."""
        answer = self._answer
        if answer is None or name not in self._covers:
            answer = self._round((name,))
        return answer, self._by_name.get(name, ())

    def _round(self, names: Sequence[JobId]) -> QueryResult:
        if self._answer is None or not self._covers.issuperset(names):
            asked_at = self._clock.now()
            self._asked_mono = self._clock.monotonic()
            every = sorted({*self._names(), *names})
            answer = self._inner.query(every, confirm_absent=True)
            self.asked += 1
            self._answer = answer if answer.asked_at is not None else replace(answer, asked_at=asked_at)
            self._covers = frozenset(every)
            by_name: dict[str, list[ObjectView]] = {}
            for view in answer.objects:
                by_name.setdefault(view.name, []).append(view)
            self._by_name = {name: tuple(views) for name, views in by_name.items()}
        return self._answer

    def cancel_if_not_started(self, object_ids: Sequence[ObjectId]) -> list[ObjectId]:
        return self._inner.cancel_if_not_started(object_ids)

    def stop_by_name(self, name: JobId) -> list[ObjectId]:
        return self._inner.stop_by_name(name)

    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        return self._inner.wait_for_change(object_ids, timeout)

    def output_paths(self, object_id: ObjectId) -> OutputPaths | None:
        return self._inner.output_paths(object_id)

    def times(self, object_ids: Sequence[ObjectId]) -> dict[ObjectId, ObjectTimes]:
        return self._inner.times(object_ids)

    def watch_changes(self, object_ids: Sequence[ObjectId], changed: Callable[[], None]) -> ChangeWatch | None:
        """The inner scheduler's watch where it has one (the local scheduler); None (poll) elsewhere."""
        if isinstance(self._inner, WatchesChanges):
            return self._inner.watch_changes(object_ids, changed)
        return None
