"""One process supervising a sweep (``SuperviseSweep``): every element once, at most --max-running at a time,
one scheduler query a round for all of them, one drain on a signal, elements another supervisor holds left
alone."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.scheduler.fake import FakeArrayScheduler, FakeScheduler
from dunscaith.adapters.store.memory import InMemoryLock, InMemoryStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.objects import CreateAnswer, CreateOutcome, ObjectSpec, ObjectState
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.residual import ResidualPolicy
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import Action, JobState, fold
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.model.jobs.sweeps import SweepMember, element_name
from dunscaith.domain.services.jobs.commands import Answer, JobCommands
from dunscaith.domain.services.jobs.job_output import JobOutputs
from dunscaith.domain.services.jobs.owning_host import OwningHost
from dunscaith.domain.services.jobs.round_query import RoundQuery
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.domain.services.jobs.supervise import SuperviseSettings, Supervisor
from dunscaith.domain.services.jobs.supervise_job import SuperviseJob
from dunscaith.domain.services.jobs.supervise_sweep import SuperviseSweep
from dunscaith.domain.services.jobs.sweep import Sweep
from dunscaith.domain.services.jobs.sweep_lock import SweepSupervisedElsewhere
from dunscaith.domain.services.jobs.sweep_status import SweepStatus
from dunscaith.ports.job_progress import JobProgress
from dunscaith.ports.job_store import Append, StoreError
from dunscaith.ports.scheduler import Scheduler
from tests.unit.jobs.helpers import NoCrash, Progress, StopAfter
from tests.unit.jobs.test_host_binding import LOGIN1
from tests.unit.jobs.test_supervise_job import NoFiles

SWEEP = JobId("exp")


@dataclass
class SweepLines:
    lines: list[str] = field(default_factory=list)
    changes: list[tuple[str, str]] = field(default_factory=list)

    def show(self, elements: Sequence[JobSummary] | JobState) -> None:  # a sweep's, or one element's (SuperviseJob)
        self.lines.append(f"job {elements.name}" if isinstance(elements, JobState) else f"{len(elements)} elements")

    def element(self, job: JobId) -> JobProgress:
        lines = self

        class _One:
            def committed(self, state: JobState, event: ev.Event) -> None:
                lines.changes.append((job, event.KIND))

            def supervised(self, state: JobState, at: datetime) -> None:
                pass

            def note(self, text: str) -> None:
                lines.lines.append(text)
        return _One()

    def ended(self, job: JobId, ending: str, state: JobState | None) -> None:
        pass

    def line(self, text: str) -> None:
        self.lines.append(text)

    def held(self, words: Mapping[JobId, str]) -> None:
        self.lines.extend(f"{job} {word}" for job, word in words.items())

    def refresh(self) -> None:
        pass

    def __enter__(self) -> SweepLines:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def _most_running(scheduler: FakeScheduler, most: int) -> int:
    return max(most, sum(1 for o in scheduler.objects().values() if o.view.state is ObjectState.RUNNING))


class CountingRunning(FakeScheduler):
    """The fake scheduler noting how many of its objects were running at once at most."""

    most_running = 0

    def _step_all(self) -> None:
        super()._step_all()
        self.most_running = _most_running(self, self.most_running)


class CountingArrays(FakeArrayScheduler):
    most_running = 0

    def _step_all(self) -> None:
        super()._step_all()
        self.most_running = _most_running(self, self.most_running)


class Crash(NoCrash):
    """kill -9 at the ``at``-th time ``point`` is reached (the process ends there: nothing after it runs)."""

    def __init__(self, point: str, at: int = 1) -> None:
        super().__init__()
        self._point, self._left = point, at

    def reached(self, point: str) -> None:
        super().reached(point)
        if point == self._point:
            self._left -= 1
            if self._left == 0:
                raise Killed(point)


class Killed(BaseException):
    pass


@dataclass
class SweepRig:
    clock: FakeClock
    store: InMemoryStore
    scheduler: CountingRunning | CountingArrays
    view: SweepLines
    use_case: SuperviseSweep
    pointers: InMemoryPointers
    one: SuperviseJob


def _rig(*, fail: frozenset[int] = frozenset(), arrays: bool = False, max_array_size: int = 1001,
         crash: NoCrash | None = None, store: InMemoryStore | None = None,
         scheduler: CountingRunning | CountingArrays | None = None, clock: FakeClock | None = None) -> SweepRig:
    clock = clock or FakeClock()
    store = store or InMemoryStore()
    crash = crash or NoCrash()

    def exit_code(spec: ObjectSpec) -> int:
        return 1 if int(spec.name.rsplit("-", 1)[1]) in fail else 0
    if scheduler is None:
        scheduler = (CountingArrays(exit_code_of=exit_code, max_array_size=max_array_size) if arrays
                     else CountingRunning(exit_code_of=exit_code))
    counter = iter(range(1, 100_000))
    residual = InMemoryResidualList()
    view = SweepLines()
    pointers = InMemoryPointers()

    def supervisor(*, cluster: str, progress: JobProgress, schedulers: object = None) -> Supervisor:
        chosen: Scheduler = schedulers(cluster) if callable(schedulers) else scheduler
        return Supervisor(store, chosen, clock, crash, progress, SuperviseSettings(poll=1.0, giveup=30.0, wait=10.0,
                                                                                        drain=2.0),
                          Policy(absence_deadline=timedelta(seconds=5), residual=ResidualPolicy.LIST),
                          nonces=lambda: Nonce(f"n{next(counter)}"), residual=residual)

    one = SuperviseJob(store=store, pointers=pointers, owning=OwningHost(pointers, LOGIN1, lambda: None), here=LOGIN1,
                       binary="/opt/d/bin/dunscaith", supervisor=supervisor,
                       views=lambda job, **display: view,  # type: ignore[arg-type]
                       sweep=Sweep(residual, lambda cluster: scheduler, clock),
                       outputs=JobOutputs(NoFiles(), lambda cluster: scheduler, clock, "/var/tmp/r"),
                       poll=1.0, on_problem=view.lines.append, on_sweep=lambda done: None)
    use_case = SuperviseSweep(store=store, one=one, supervisor=supervisor, views=lambda sweep, **display: view,
                              schedulers=lambda cluster: scheduler, clock=clock, crash=crash,
                              on_problem=view.lines.append)
    return SweepRig(clock, store, scheduler, view, use_case, pointers, one)


def _record(r: SweepRig, count: int, max_running: int | None = None) -> list[JobId]:
    names = []
    for index in range(1, count + 1):
        name = element_name(SWEEP, index)
        spec = JobSpec(name, "local", "fake", ("echo", str(index)), member=SweepMember(SWEEP, index, max_running))
        names.append(RecordJob(r.store, r.clock, NoCrash())(spec))
    return names


def _state(r: SweepRig, job: JobId) -> JobState:
    return fold(r.store.read(job))


def test_every_element_runs_once_and_never_more_than_max_running_at_a_time() -> None:
    r = _rig()
    names = _record(r, 20, max_running=3)
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 20
    assert all(r.scheduler.count("create_held", name) == 1 for name in names)
    assert all(len(_state(r, name).attempts) == 1 for name in names)
    assert r.scheduler.most_running <= 3
    assert not done.drained and not done.elsewhere


def test_one_query_a_round_answers_every_element() -> None:
    r = _rig()
    _record(r, 30)
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 30
    asked = r.scheduler.calls["query"]
    assert asked == done.queries
    assert asked < 30  # one element's query per poll would be at least one per element
    assert any(len(names) == 30 for kind, names in r.scheduler.log if kind == "query")  # type: ignore[arg-type]


def test_failed_elements_are_counted_and_the_others_succeed() -> None:
    r = _rig(fail=frozenset({2, 5}))
    _record(r, 6, max_running=2)
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    outcomes = {e.job: e.outcome for e in done.elements}
    assert outcomes == {f"exp-{i}": ("failed" if i in (2, 5) else "succeeded") for i in range(1, 7)}


def test_a_signal_drains_once_and_starts_nothing_more() -> None:
    r = _rig()
    names = _record(r, 10, max_running=2)
    done = r.use_case(SWEEP, StopAfter(r.clock, waits=1), fresh=True)
    assert done.drained
    attempts = [len(_state(r, name).attempts) for name in names]
    assert max(attempts) <= 1 and sum(attempts) <= 2  # the two started ones, and nothing after the stop
    assert sum(r.scheduler.count("create_held", name) for name in names) == sum(attempts)
    # reattached: every element once in all, the two started ones carried on, never sent again
    again = r.use_case(SWEEP, StopAfter(r.clock), fresh=False)
    assert [e.outcome for e in again.elements] == ["succeeded"] * 10
    assert all(r.scheduler.count("create_held", name) == 1 for name in names)


def test_an_element_another_supervisor_holds_is_listed_and_never_taken() -> None:
    r = _rig()
    names = _record(r, 4)
    with r.store.lock(names[1]):
        done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [job for job, _ in done.elsewhere] == [names[1]]
    assert r.scheduler.count("create_held", names[1]) == 0
    assert _state(r, names[1]).attempts == ()
    assert sorted(e.job for e in done.ends) == sorted(set(names) - {names[1]})


class Meanwhile(StopAfter):
    """The supervisor's waits; during the first, ``act`` (what another process does while it lives)."""

    def __init__(self, clock: FakeClock, act: Callable[[], None]) -> None:
        super().__init__(clock)
        self._act: Callable[[], None] | None = act

    def wait(self, seconds: float) -> str | None:
        act, self._act = self._act, None
        if act is not None:
            act()
        return super().wait(seconds)


def test_while_a_sweeps_supervisor_lives_the_elements_waiting_for_a_slot_are_its_own() -> None:
    # Issue 38: with --max-running 1 the elements not started yet had no lock held: status called them
    # Unattended, and a second `supervise exp` took them and ran them beside the first's (two at once).
    r = _rig()
    names = _record(r, 6, max_running=1)
    seen: dict[str, object] = {}
    refused: list[str] = []

    def meanwhile() -> None:
        assert _state(r, names[5]).attempts == ()  # still waiting for a slot
        seen["unattended"] = [s.job for s in r.store.unattended()]
        seen["status"] = SweepStatus(r.store).of(SWEEP).unattended
        for second in (lambda: r.use_case(SWEEP, StopAfter(r.clock), fresh=False),
                       lambda: r.one(names[5], StopAfter(r.clock), fresh=False)):
            try:
                second()
            except SweepSupervisedElsewhere as exc:
                refused.append(str(exc))
        seen["all"] = r.use_case.unattended(StopAfter(r.clock), title=JobId("all"))

    done = r.use_case(SWEEP, Meanwhile(r.clock, meanwhile), fresh=True)
    assert seen["unattended"] == [] and seen["status"] == ()
    assert refused == ["sweep exp is supervised by another live process (the submit or supervise of it "
                               "still running, which holds every element it has not started yet): nothing was "
                               "taken, and its --max-running holds; see it with: dunscaith status exp"] * 2
    assert seen["all"].ends == ()  # type: ignore[attr-defined]
    assert r.scheduler.most_running <= 1
    assert [e.outcome for e in done.elements] == ["succeeded"] * 6 and not done.elsewhere
    assert all(r.scheduler.count("create_held", name) == 1 for name in names)


def test_after_a_sweeps_supervisor_is_killed_the_next_one_keeps_its_max_running() -> None:
    store = InMemoryStore()
    first = _rig(crash=Crash("release-committed", at=2), store=store)
    names = _record(first, 6, max_running=1)
    try:
        first.use_case(SWEEP, StopAfter(first.clock), fresh=True)
    except Killed:  # kill -9: every lock it held, the sweep's too, goes with it; element 2 runs on
        pass
    again = _rig(store=store, scheduler=first.scheduler, clock=first.clock)
    done = again.use_case(SWEEP, StopAfter(again.clock), fresh=False)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 6
    assert first.scheduler.most_running <= 1
    assert all(first.scheduler.count("create_held", name) == 1 for name in names)


def test_a_settled_sweep_is_supervised_to_nothing() -> None:
    r = _rig()
    _record(r, 3)
    r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    before = r.scheduler.calls["create_held"]
    again = r.use_case(SWEEP, StopAfter(r.clock), fresh=False)
    assert again.ends == () and r.scheduler.calls["create_held"] == before


# ---------------------------------------------------------------------- a sweep as one job array


def test_a_sweep_is_one_array_created_and_released_in_one_request_each() -> None:
    r = _rig(arrays=True)
    names = _record(r, 20, max_running=3)
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 20
    assert r.scheduler.calls["create_array_held"] == 1 and r.scheduler.calls["create_held"] == 0
    assert r.scheduler.calls["release"] == 1  # the array's id: every task at once
    assert r.scheduler.most_running <= 3  # the array's own bound (Slurm: %3)
    objects = {_state(r, name).attempts[0].object_id for name in names}
    assert objects == {f"fake-1_{i}" for i in range(1, 21)}
    assert any("20 elements sent as job array fake-1" in line for line in r.view.lines)


class CancelledBeforeItsLock(InMemoryStore):
    """A store where ``cancel`` of one element runs (a command: its lock taken, the job settled with nothing
    created, its lock given back) right before the sweep's supervisor takes that element's lock: after the
    records were read, before the lock was held."""

    def __init__(self, clock: FakeClock, victim: JobId) -> None:
        super().__init__()
        self._clock, self.victim = clock, victim

    @contextmanager
    def lock(self, job: JobId) -> Iterator[InMemoryLock]:
        if job == self.victim:
            self.victim = JobId("")
            supervisor = Supervisor(self, FakeScheduler(), self._clock, NoCrash(), Progress(),
                                    SuperviseSettings(poll=1.0, giveup=30.0, wait=10.0, drain=2.0),
                                    Policy(absence_deadline=timedelta(seconds=5)))
            done = JobCommands(self, self._clock, NoCrash(), lambda: supervisor)(job, Action.CANCEL,
                                                                                 StopAfter(self._clock))
            assert done.answer is Answer.CONFIRMED
        with super().lock(job) as held:
            yield held


def test_an_element_a_command_settled_between_its_read_and_its_lock_is_not_sent_in_the_array() -> None:
    clock = FakeClock()
    victim = element_name(SWEEP, 3)
    store = CancelledBeforeItsLock(clock, victim)
    r = _rig(arrays=True, store=store, clock=clock)
    names = _record(r, 5)
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert {e.job: e.outcome for e in done.elements} == {
        name: "cancelled" if name == victim else "succeeded" for name in names}
    assert not _state(r, victim).attempts  # nothing was created for it
    assert r.scheduler.calls["create_array_held"] == 1 and r.scheduler.calls["create_held"] == 0
    assert {_state(r, name).attempts[0].object_id for name in names if name != victim} == {
        "fake-1_1", "fake-1_2", "fake-1_4", "fake-1_5"}


class Transactions(InMemoryStore):
    """Each transaction's events as (job, kind), in order; ``fail`` makes the transactions whose kinds it
    names fail once each, whole (nothing kept), as a store that could not commit."""

    def __init__(self, fail: set[str] | None = None) -> None:
        super().__init__()
        self.commits: list[list[tuple[str, str]]] = []
        self.fail = fail if fail is not None else set()

    def append_many(self, appends: Sequence[Append]) -> list[int]:
        kinds = {a.kind for a in appends}
        if kinds & self.fail:
            self.fail -= kinds
            raise StoreError("the store could not commit")
        self.commits.append([(a.job, a.kind) for a in appends])
        return super().append_many(appends)


def test_each_phase_of_an_array_is_one_transaction_for_every_element_before_the_request_after_it() -> None:
    store = Transactions()
    r = _rig(arrays=True, store=store)
    names = _record(r, 5)
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 5
    phases = [c for c in store.commits if {kind for _, kind in c} & {"submitting", "created", "released"}]
    assert phases == [[(name, kind) for name in names] for kind in ("submitting", "created", "released")]
    assert r.scheduler.calls["create_array_held"] == 1 and r.scheduler.calls["release"] == 1


def test_an_arrays_element_pointer_is_written_once_for_its_phases_not_at_each() -> None:
    # each pointer write is synced: a 500-element array spent most of its time in them, three an element
    r = _rig(arrays=True)
    names = _record(r, 5)
    r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    for name in names:
        states = [p.state for p in r.pointers.writes if p.job == name]
        assert states[0] == "recorded" and states[-1] == "succeeded", states
        assert "submitting" not in states and "held" not in states
        assert len(states) == len(set(states)), states  # each state once: never a write per event


def test_the_pointers_a_pass_changes_are_written_in_one_batch() -> None:
    # 500 elements released at once made 1,000 pointer writes (1,500 syncs) one by one: a pass writes its
    # elements' changed pointers together, so no element's pointer is written alone
    r = _rig(arrays=True)
    names = _record(r, 5)
    r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    batched = [p for batch in r.pointers.batches for p in batch]
    assert len(batched) == len(r.pointers.writes)
    assert all(len(batch) == len(names) for batch in r.pointers.batches), [len(b) for b in r.pointers.batches]


class SeeingPointers(CountingArrays):
    """The pointers there when the array's one request goes out."""

    pointers: InMemoryPointers | None = None
    seen: set[JobId] | None = None

    def create_array_held(self, sweep: JobId, elements: Sequence[tuple[int, ObjectSpec]],
                          max_running: int | None) -> CreateAnswer:
        assert self.pointers is not None
        self.seen = set(self.pointers.pointers)
        return super().create_array_held(sweep, elements, max_running)


def test_a_fresh_arrays_first_pointers_are_written_together_before_its_request() -> None:
    # other login nodes route by them: each durable before the request that could make its job, with one
    # sync for the batch (FilePointers.write_many), not four an element
    scheduler = SeeingPointers(exit_code_of=lambda spec: 0)
    r = _rig(arrays=True, scheduler=scheduler)
    scheduler.pointers = r.pointers
    names = _record(r, 5)
    r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [p.job for p in r.pointers.batches[0]] == names  # the first batch; the passes' own follow it
    assert [p.state for p in r.pointers.batches[0]] == ["recorded"] * 5
    assert scheduler.seen == set(names)


@pytest.mark.parametrize("phase", ["submitting", "created", "released"])
def test_a_phase_the_store_could_not_commit_keeps_none_of_it_and_every_element_runs_once(phase: str) -> None:
    # "submitting": nothing sent, each element sent by its own loop; "created": the array made, its answers
    # lost, each element's task found by name and nonce; "released": each element's loop releases its task
    store = Transactions(fail={phase})
    r = _rig(arrays=True, store=store)
    names = _record(r, 5)
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 5
    assert r.scheduler.calls["create_array_held"] == (phase != "submitting")
    if phase == "released":  # released, not recorded so: released again by the first element's loop, whole
        assert r.scheduler.calls["release"] == 2
    made = r.scheduler.objects()
    assert all(sum(1 for o in made.values() if o.view.name == name) == 1 for name in names)
    assert all(len(_state(r, name).attempts) == 1 for name in names)


@pytest.mark.parametrize("point", ["answer-committed", "release-sent", "release-committed"])
def test_kill_9_after_a_phase_then_supervise_runs_every_element_once(point: str) -> None:
    store = InMemoryStore()
    first = _rig(arrays=True, crash=Crash(point), store=store)
    names = _record(first, 5)
    with pytest.raises(Killed):
        first.use_case(SWEEP, StopAfter(first.clock), fresh=True)
    again = _rig(arrays=True, store=store, scheduler=first.scheduler)
    done = again.use_case(SWEEP, StopAfter(again.clock), fresh=False)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 5
    assert first.scheduler.calls["create_array_held"] == 1 and first.scheduler.calls["create_held"] == 0
    assert all(len(_state(again, name).attempts) == 1 for name in names)


def test_a_sweep_above_the_clusters_array_size_is_one_held_job_per_element_and_says_so() -> None:
    r = _rig(arrays=True, max_array_size=10)
    _record(r, 12)
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 12
    assert r.scheduler.calls["create_array_held"] == 0 and r.scheduler.calls["create_held"] == 12
    assert any("not one job array (index 12 is above the cluster's MaxArraySize (10))" in line
               for line in r.view.lines)


def test_a_script_sweep_whose_sbatch_lines_differ_is_one_held_job_per_element_and_says_so() -> None:
    # {} in an #SBATCH line: each element asks its own options, which one array cannot carry
    r = _rig(arrays=True)
    names = []
    for index in range(1, 5):
        name = element_name(SWEEP, index)
        script = f"#!/bin/sh\n#SBATCH --mem={index}G\necho {index}\n"
        names.append(RecordJob(r.store, r.clock, NoCrash())(
            JobSpec(name, "local", "fake", (), script=script, member=SweepMember(SWEEP, index, None))))
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 4
    assert r.scheduler.calls["create_array_held"] == 0 and r.scheduler.calls["create_held"] == 4
    assert any("not one job array (the elements' scripts carry different #SBATCH lines)" in line
               for line in r.view.lines)
    assert all(len(_state(r, name).attempts) == 1 for name in names)


def test_an_arrays_lost_reply_makes_every_element_unknown_then_found_never_sent_again() -> None:
    r = _rig(arrays=True)
    names = _record(r, 5)
    r.scheduler._create_faults.append(CreateAnswer(CreateOutcome.UNKNOWN, None, "timed out"))
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 5
    assert r.scheduler.calls["create_array_held"] == 1 and r.scheduler.calls["create_held"] == 0
    for name in names:
        kinds = [line.kind for line in r.store.read(name).events]
        assert "unknown" in kinds and "found" in kinds and kinds.count("submitting") == 1


def test_kill_9_after_the_array_was_made_and_before_its_answers_then_reattach_finds_every_task() -> None:
    store = InMemoryStore()
    first = _rig(arrays=True, crash=Crash("create-answered"), store=store)
    names = _record(first, 6, max_running=2)
    try:
        first.use_case(SWEEP, StopAfter(first.clock), fresh=True)
    except Killed:
        pass
    again = _rig(arrays=True, store=store, scheduler=first.scheduler)
    done = again.use_case(SWEEP, StopAfter(again.clock), fresh=False)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 6
    assert first.scheduler.calls["create_array_held"] == 1 and first.scheduler.calls["create_held"] == 0
    assert all(len(_state(again, name).attempts) == 1 for name in names)


def test_kill_9_between_submitting_and_the_send_never_sends_the_array_twice() -> None:
    store = InMemoryStore()
    first = _rig(arrays=True, crash=Crash("submitting-committed"), store=store)
    names = _record(first, 5)
    try:
        first.use_case(SWEEP, StopAfter(first.clock), fresh=True)
    except Killed:
        pass
    assert first.scheduler.calls["create_array_held"] == 0
    assert all([line.kind for line in store.read(name).events].count("submitting") == 1 for name in names)
    again = _rig(arrays=True, store=store, scheduler=first.scheduler)
    done = again.use_case(SWEEP, StopAfter(again.clock), fresh=False)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 5
    # every element's "submitting" was durable (one transaction): each is unknown, never found, and tried again
    # as attempt 2, on its own; none is sent as a new array
    assert again.scheduler.calls["create_array_held"] == 0
    made = first.scheduler.objects()
    assert all(sum(1 for o in made.values() if o.view.name == name and o.view.state is ObjectState.COMPLETED) == 1
               for name in names)
    assert all(len(_state(again, name).attempts) == 2 for name in names)


def test_a_round_answer_asked_before_an_objects_change_is_not_given_to_the_job_it_woke() -> None:
    clock = FakeClock()
    scheduler = FakeScheduler()
    query = RoundQuery(scheduler, lambda: [JobId("a"), JobId("b")], clock)
    query.query([JobId("a")], confirm_absent=True)
    query.query([JobId("b")], confirm_absent=True)  # the same round: answered from the first
    assert scheduler.calls["query"] == 1
    clock.sleep(1.0)
    query.older_than(clock.monotonic())  # b's object changed after that answer was asked
    query.query([JobId("b")], confirm_absent=True)
    assert scheduler.calls["query"] == 2
    query.older_than(clock.monotonic() - 0.5)  # a change seen before the newest answer: it stands
    query.query([JobId("a")], confirm_absent=True)
    assert scheduler.calls["query"] == 2


class SlowBeats(InMemoryStore):
    """A store whose every lock beat takes ``cost`` seconds of the fake clock: a pass over many elements
    then takes longer than the shortest poll interval (0.25 s after a change), as 500 elements do."""

    def __init__(self, clock: FakeClock, cost: float) -> None:
        super().__init__()
        self._clock, self._cost = clock, cost

    def lock(self, job: JobId):  # type: ignore[no-untyped-def]
        outer = super().lock(job)
        clock, cost = self._clock, self._cost

        class _Slow:
            def __enter__(self):  # type: ignore[no-untyped-def]
                held = outer.__enter__()
                beat = held.beat

                def slow_beat(at: datetime, next_at: datetime | None = None) -> None:
                    clock.sleep(cost)
                    beat(at, next_at)
                held.beat = slow_beat  # type: ignore[method-assign]
                return held

            def __exit__(self, *exc: object) -> None:
                outer.__exit__(*exc)  # type: ignore[arg-type]
        return _Slow()


def _queries_until(count: int, beat_cost: float, seconds: float) -> int:
    clock = FakeClock()
    r = _rig(store=SlowBeats(clock, beat_cost), scheduler=CountingRunning(exit_code_of=lambda spec: None),
             clock=clock)
    _record(r, count)
    done = r.use_case(SWEEP, StopAt(clock, clock.monotonic() + seconds), fresh=True)
    assert done.drained and all(len(names) == count for kind, names in r.scheduler.log if kind == "query")  # type: ignore[arg-type]
    return done.queries


class StopAt(StopAfter):
    """A stop requested once the fake clock reaches ``at`` (monotonic)."""

    def __init__(self, clock: FakeClock, at: float) -> None:
        super().__init__(clock)
        self._at = at

    def wait(self, seconds: float) -> str | None:
        self._clock.sleep(seconds)
        self.flag = self.flag or self._clock.monotonic() >= self._at
        return self.pending()


def test_elements_answered_by_one_query_keep_asking_together_however_long_a_pass_takes() -> None:
    # 200 running elements whose pass takes 200 x 2 ms = 0.4 s, longer than the first polls after a change
    # (0.25 s, 0.5 s): each element times its polls from the pass's start, so over a minute the sweep asks
    # the scheduler as often as one job alone does, each time about all of them.
    alone = _queries_until(1, 0.002, 60.0)
    assert _queries_until(200, 0.002, 60.0) <= alone + 1


class WakesEveryone(InMemoryStore):
    """A store whose every append wakes every watch on it, whichever job it was for: SQLite's one watch of
    its file for the whole process cannot tell one job's commits from another's. Each append takes a
    millisecond of the fake clock, as a commit does."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(watchable=True)
        self._clock = clock

    def append(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> int:
        self._clock.sleep(0.001)
        seq = super().append(job, at, kind, data)
        with self._mutex:
            woken = [w.wake for w in self._watches]
        for wake in woken:
            wake()
        return seq


def test_a_wake_for_an_append_never_makes_each_element_ask_the_scheduler_again() -> None:
    # Every element's commit wakes every element (the storm of a busy sweep on SQLite): a wake says that
    # a record may have been appended to, nothing of the scheduler's objects, so the round's one answer
    # still serves every element. Before, each woken element threw it away: one query per element.
    clock = FakeClock()
    store = WakesEveryone(clock)
    r = _rig(store=store, clock=clock)
    _record(r, 30)
    done = r.use_case(SWEEP, StopAfter(r.clock), fresh=True)
    assert [e.outcome for e in done.elements] == ["succeeded"] * 30
    assert done.queries <= 6, done.queries  # one a round (61 when each woken element asked anew)


def test_a_sweeps_supervisor_says_it_holds_its_elements_in_one_attendance_not_a_rewrite_of_each_pointer() -> None:
    """Seed 000 keeps NFS writes rare: one file for the sweep every ten poll intervals (1 s here), naming the
    elements held, where each element's pointer would be rewritten; removed when the supervision ends."""
    clock = FakeClock()
    r = _rig(scheduler=CountingRunning(exit_code_of=lambda spec: None), clock=clock,
             store=InMemoryStore(watchable=True))
    _record(r, 30)
    seen: list[list[tuple[str, frozenset[int]]]] = []

    class Watching(StopAt):
        def wait(self, seconds: float) -> str | None:
            seen.append([(a.sweep, a.indices) for a in r.pointers.attendances()])
            return super().wait(seconds)

    done = r.use_case(SWEEP, Watching(clock, clock.monotonic() + 60.0), fresh=True)
    assert done.drained
    assert seen[-1] == [(SWEEP, frozenset(range(1, 31)))]  # every element it held, until its end
    writes = r.pointers.attendance_writes
    assert 5 <= len(writes) <= 7  # every 10 s over a minute: never more often
    assert all(later.supervised_at - earlier.supervised_at >= timedelta(seconds=10)
               for earlier, later in itertools.pairwise(writes))
    said: dict[str, set[object]] = {}
    for pointer in r.pointers.writes:
        if pointer.supervised_at is not None:
            said.setdefault(pointer.job, set()).add(pointer.supervised_at)
    assert len(said) == 30 and all(len(times) == 1 for times in said.values())  # each once, as it began
    assert r.pointers.attendances() == []  # removed as the supervision ended


def test_the_attendance_names_the_elements_waiting_for_a_slot_so_another_login_node_sees_them_attended() -> None:
    # Issue 38, seen from another login node: the attendance named only the started elements, so those
    # waiting for a slot of --max-running looked Unattended there while their supervisor lived.
    from dunscaith.domain.model.jobs.attendance import unattended_by_pointer

    r = _rig()
    names = _record(r, 4, max_running=1)
    seen: list[bool] = []

    def meanwhile() -> None:
        assert _state(r, names[3]).attempts == ()  # waiting for a slot
        assert [(a.sweep, a.indices) for a in r.pointers.attendances()] == [(SWEEP, frozenset({1, 2, 3, 4}))]
        # a waiting element with a pointer of its own (a resubmitted one: `resubmit exp --failed`), last seen
        # supervised long ago; a fresh one has none until it starts, and nothing to judge it by elsewhere
        pointer = dataclasses.replace(r.pointers.read(names[0]), job=names[3], state="resubmitted",
                                      supervised_at=None)
        seen.append(unattended_by_pointer(pointer, r.clock.now(), timedelta(seconds=1.0),
                                          r.pointers.attendances()))

    done = r.use_case(SWEEP, Meanwhile(r.clock, meanwhile), fresh=True)
    assert seen == [False]
    assert [e.outcome for e in done.elements] == ["succeeded"] * 4


def test_a_stale_attendance_a_killed_supervisor_left_is_removed_and_a_live_ones_kept() -> None:
    from dunscaith.domain.model.jobs.sweep_attendance import SweepAttendance

    clock = FakeClock()
    r = _rig(scheduler=CountingRunning(exit_code_of=lambda spec: None), clock=clock,
             store=InMemoryStore(watchable=True))
    _record(r, 3)
    now = clock.now()
    stale = SweepAttendance(SWEEP, "login1-dead", LOGIN1, now - timedelta(seconds=21), frozenset({1, 2, 3}))
    other = SweepAttendance(SWEEP, "login1-live", LOGIN1, now - timedelta(seconds=5), frozenset({9}))
    r.pointers.write_attendance(stale)
    r.pointers.write_attendance(other)
    names: list[list[str]] = []

    class Watching(StopAt):
        def wait(self, seconds: float) -> str | None:
            names.append(sorted(a.holder for a in r.pointers.attendances()))
            return super().wait(seconds)

    r.use_case(SWEEP, Watching(clock, clock.monotonic() + 3.0), fresh=True)
    assert "login1-dead" not in names[0] and "login1-live" in names[0]
    assert [a.holder for a in r.pointers.attendances()] == ["login1-live"]
