"""Job commands on fakes: answered once, by the live supervisor or by the command under the lock."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta

import pytest

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState, QueryResult
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.residual import ResidualReason
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import Action, OutcomeKind, fold
from dunscaith.domain.services.jobs.commands import Answer, Answerer, CommandResult, JobCommands
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.domain.services.jobs.supervise import Ending, SuperviseSettings, SupervisionEnd, Supervisor
from tests.expect import present
from tests.unit.jobs.helpers import NoCrash, Progress, Rig, StopAfter, rig


class Crash(Exception):
    pass


class CrashAt(NoCrash):
    def __init__(self, point: str) -> None:
        super().__init__()
        self.point = point
        self.armed = False

    def reached(self, point: str) -> None:
        if self.armed and point == self.point:
            self.armed = False
            raise Crash(point)


def _pending(r: Rig) -> JobId:
    """A job whose object is released and waits to start (nothing runs by itself on this fake)."""
    job = r.record()
    r.run(job, StopAfter(r.clock, waits=2))
    assert present(r.state(job).current).object_state is ObjectState.PENDING
    return job


def _commands(r: Rig, wait: float = 5.0) -> JobCommands:
    return JobCommands(r.store, r.clock, NoCrash(), lambda: r.supervisor, wait=wait)


def _oid(r: Rig, job: JobId) -> ObjectId:
    return present(present(r.state(job).current).object_id)


def test_hold_without_a_supervisor_is_answered_and_carried_out_by_the_command() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    result = _commands(r)(job, Action.HOLD, StopAfter(r.clock))
    assert (result.answer, result.by) == (Answer.CONFIRMED, Answerer.THIS_COMMAND)
    assert r.scheduler.get(_oid(r, job)).view.state is ObjectState.HELD
    assert r.kinds(job)[-3:] == ["request", "answer", "held"]
    assert r.store.health(job).held is False  # the lock is released again


def test_release_after_hold_releases_once_and_a_supervisor_does_not_release_a_held_job_again() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    _commands(r)(job, Action.HOLD, StopAfter(r.clock))
    r.run(job, StopAfter(r.clock, waits=3))  # supervision resumes: the hold stands
    assert r.scheduler.get(_oid(r, job)).view.state is ObjectState.HELD
    result = _commands(r)(job, Action.RELEASE, StopAfter(r.clock))
    assert result.answer is Answer.CONFIRMED
    assert r.scheduler.get(_oid(r, job)).view.state is ObjectState.PENDING
    assert r.scheduler.count("release", _oid(r, job)) == 2  # the first release, and the user's


@pytest.mark.parametrize(("action", "says"), [(Action.RELEASE, "not held"), (Action.HOLD, "only an object that")])
def test_a_request_the_rules_refuse_is_answered_refused_with_the_reason(action: Action, says: str) -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    r.scheduler.start(_oid(r, job))
    r.run(job, StopAfter(r.clock, waits=2))  # the record sees it running
    result = _commands(r)(job, action, StopAfter(r.clock))
    assert result.answer is Answer.REFUSED and says in result.detail
    assert r.scheduler.count("hold") == 0


def test_cancel_stops_a_running_object_and_the_outcome_is_cancelled() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    r.scheduler.start(_oid(r, job))
    result = _commands(r)(job, Action.CANCEL, StopAfter(r.clock))
    assert result.answer is Answer.CONFIRMED
    state = r.state(job)
    assert state.outcome is not None and state.outcome.kind is OutcomeKind.CANCELLED and state.settled
    assert r.scheduler.get(_oid(r, job)).view.state is ObjectState.CANCELLED


def test_give_up_makes_the_current_attempts_end_the_outcome_with_no_new_attempt() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    assert _commands(r)(job, Action.GIVE_UP, StopAfter(r.clock)).answer is Answer.CONFIRMED
    r.scheduler.fail_node(_oid(r, job))  # recoverable: without give-up, a second attempt
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.FAILED and len(present(end.state).attempts) == 1


def test_abandon_moves_the_open_attempt_to_the_residual_list_and_settles() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    assert _commands(r)(job, Action.ABANDON, StopAfter(r.clock)).answer is Answer.CONFIRMED
    state = r.state(job)
    assert present(state.outcome).kind is OutcomeKind.ABANDONED and state.settled
    (entry,) = [e.entry for e in r.residual.entries()]
    assert entry is not None and (entry.reason, entry.nonce) == (ResidualReason.ABANDONED, Nonce("n1"))
    again = _commands(r)(job, Action.HOLD, StopAfter(r.clock))
    assert again.answer is Answer.REFUSED and "settled" in again.detail


def test_a_command_killed_between_its_commit_and_its_scheduler_call_is_carried_out_by_the_next_supervisor() -> None:
    crash = CrashAt("request-answered")
    r = rig(exit_code=None, crash=crash)
    job = _pending(r)
    crash.armed = True
    with pytest.raises(Crash):
        _commands(r)(job, Action.HOLD, StopAfter(r.clock))
    assert r.kinds(job)[-2:] == ["request", "answer"] and r.scheduler.count("hold") == 0
    r.run(job, StopAfter(r.clock, waits=2))
    assert r.scheduler.get(_oid(r, job)).view.state is ObjectState.HELD
    assert r.scheduler.count("hold") == 1 and r.kinds(job).count("answer") == 1


def _live(store: InMemoryStore, scheduler: FakeScheduler,
          job: JobId) -> tuple[threading.Thread, StopAfter, list[SupervisionEnd]]:
    clock = SystemClock()
    supervisor = Supervisor(store, scheduler, clock, NoCrash(), Progress(), SuperviseSettings(poll=0.01, wait=1),
                            Policy(absence_deadline=timedelta(seconds=60)), residual=InMemoryResidualList())
    stop = StopAfter(clock)
    ends: list[SupervisionEnd] = []

    def supervise() -> None:
        with store.lock(job) as lock:
            ends.append(supervise_one(supervisor, job, lock, stop))

    thread = threading.Thread(target=supervise)
    thread.start()
    return thread, stop, ends


def _recorded(store: InMemoryStore) -> JobId:
    spec = JobSpec(JobId("live"), "local", "fake", ("true",), max_attempts=3)  # the fake can requeue
    return RecordJob(store, SystemClock(), NoCrash())(spec)


def test_with_a_live_supervisor_the_request_is_answered_by_it_once() -> None:
    store, scheduler = InMemoryStore(), FakeScheduler()
    job = _recorded(store)
    thread, stop, _ = _live(store, scheduler, job)
    try:
        commands = JobCommands(store, SystemClock(), NoCrash(), lambda: pytest.fail("no second actor"), wait=10)
        result = commands(job, Action.HOLD, StopAfter(SystemClock()))
        assert (result.answer, result.by) == (Answer.CONFIRMED, Answerer.SUPERVISOR)
        released = commands(job, Action.RELEASE, StopAfter(SystemClock()))
        assert released.answer is Answer.CONFIRMED
        bad = commands(job, Action.RELEASE, StopAfter(SystemClock()))
        assert (bad.answer, bad.by) == (Answer.REFUSED, Answerer.SUPERVISOR) and "not held" in bad.detail
    finally:
        stop.flag = True
        thread.join()
    kinds = [line.kind for line in store.read(job).events]
    assert kinds.count("request") == kinds.count("answer") == 3


def test_a_request_not_answered_in_time_says_so_and_stays_to_be_answered_once() -> None:
    store = InMemoryStore()
    job = _recorded(store)
    with store.lock(job):  # a supervisor that holds the lock but never answers (stuck)
        result = JobCommands(store, SystemClock(), NoCrash(), lambda: pytest.fail("no second actor"),
                             wait=0.5)(job, Action.HOLD, StopAfter(SystemClock()))
    assert result.answer is Answer.NOT_ANSWERED and "stays in the record" in result.detail
    scheduler = FakeScheduler()
    thread, stop, ends = _live(store, scheduler, job)
    try:
        from tests.e2e.jobs.cli import await_condition
        await_condition(lambda: present(fold(store.read(job)).request(result.request)).result is not None, 10)
    finally:
        stop.flag = True
        thread.join()
    assert present(fold(store.read(job)).request(result.request)).result == "confirmed"
    assert ends[0].ending is Ending.DRAINED


def test_requeue_of_a_started_object_is_sent_once_after_it_is_durable() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    r.scheduler.start(_oid(r, job))
    r.run(job, StopAfter(r.clock, waits=2))
    result = _commands(r)(job, Action.REQUEUE, StopAfter(r.clock))
    assert result.answer is Answer.CONFIRMED and result.problem == ""
    assert r.scheduler.count("requeue", _oid(r, job)) == 1
    assert [k for k in r.kinds(job) if k.startswith("requeue")] == ["requeueing", "requeued"]
    refused = _commands(r)(job, Action.REQUEUE, StopAfter(r.clock))  # pending again: not started now
    assert refused.answer is Answer.REFUSED and "only a started object" in refused.detail


def test_a_requeue_whose_sender_died_is_reported_as_uncertain_never_sent_again() -> None:
    crash = CrashAt("requeueing-committed")
    r = rig(exit_code=None, crash=crash)
    job = _pending(r)
    r.scheduler.start(_oid(r, job))
    r.run(job, StopAfter(r.clock, waits=2))
    crash.armed = True
    with pytest.raises(Crash):
        _commands(r)(job, Action.REQUEUE, StopAfter(r.clock))
    r.run(job, StopAfter(r.clock, waits=2))  # the next actor
    assert r.scheduler.count("requeue") == 0
    assert "may or may not have reached the scheduler" in r.state(job).failures[-1]
    assert r.state(job).requeue_in_flight is None


def test_a_requeue_the_scheduler_refuses_is_reported_by_the_command() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    r.scheduler.start(_oid(r, job))
    r.run(job, StopAfter(r.clock, waits=2))
    r.scheduler.fail_next("requeue", "requeue is disabled on this partition")
    result = _commands(r)(job, Action.REQUEUE, StopAfter(r.clock))
    assert result.answer is Answer.CONFIRMED and "requeue is disabled" in result.problem


def test_resubmit_replaces_a_not_started_object_by_a_new_attempt() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    first = _oid(r, job)
    result = _commands(r)(job, Action.RESUBMIT, StopAfter(r.clock))
    assert result.answer is Answer.CONFIRMED
    assert r.scheduler.get(first).view.state is ObjectState.CANCELLED
    assert len(r.state(job).attempts) == 1  # a command never makes a new attempt: supervision does
    r.run(job, StopAfter(r.clock, waits=3))
    state = r.state(job)
    assert len(state.attempts) == 2 and present(state.current).nonce != state.attempts[0].nonce
    assert present(state.current).object_state is ObjectState.PENDING and state.outcome is None
    assert r.scheduler.count("create_held") == 2


def test_resubmit_of_a_running_object_is_refused() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    r.scheduler.start(_oid(r, job))
    r.run(job, StopAfter(r.clock, waits=2))
    result = _commands(r)(job, Action.RESUBMIT, StopAfter(r.clock))
    assert result.answer is Answer.REFUSED and "cancel or requeue a running one" in result.detail


def test_a_live_supervisors_confirmed_action_the_scheduler_refuses_is_reported_failed() -> None:
    store, scheduler = InMemoryStore(), FakeScheduler()
    job = _recorded(store)
    thread, stop, _ = _live(store, scheduler, job)
    try:
        from tests.e2e.jobs.cli import await_condition
        await_condition(lambda: fold(store.read(job)).current is not None
                        and present(fold(store.read(job)).current).object_state is ObjectState.PENDING, 10)
        scheduler.start(present(present(fold(store.read(job)).current).object_id))
        await_condition(lambda: present(fold(store.read(job)).current).object_state is ObjectState.RUNNING, 10)
        scheduler.fail_next("requeue", "the scheduler said no")
        commands = JobCommands(store, SystemClock(), NoCrash(), lambda: pytest.fail("no second actor"), wait=10)
        result = commands(job, Action.REQUEUE, StopAfter(SystemClock()))
        assert (result.answer, result.by) == (Answer.CONFIRMED, Answerer.SUPERVISOR)
        assert "the scheduler said no" in result.problem  # not carried out: the command exits non-zero
        held = commands(job, Action.GIVE_UP, StopAfter(SystemClock()))
        assert held.answer is Answer.CONFIRMED and held.problem == ""  # carried out
    finally:
        stop.flag = True
        thread.join()


def test_requeue_on_the_local_scheduler_is_refused_up_front_with_the_reason() -> None:
    r = rig(exit_code=None)
    spec = JobSpec(JobId("on-local"), "local", "local", ("true",), max_attempts=3)
    job = RecordJob(r.store, r.clock, NoCrash())(spec)
    r.run(job, StopAfter(r.clock, waits=2))
    r.scheduler.start(_oid(r, job))
    r.run(job, StopAfter(r.clock, waits=2))
    result = _commands(r)(job, Action.REQUEUE, StopAfter(r.clock))
    assert result.answer is Answer.REFUSED and "the local scheduler cannot requeue" in result.detail
    assert r.scheduler.count("requeue") == 0


class _EndsOnWait(StopAfter):
    """The command's waits; ``end`` runs at the first (the object ends while the command waits on)."""

    def __init__(self, r: Rig, end: Callable[[], None]) -> None:
        super().__init__(r.clock)
        self.end, self.waits = end, 0

    def wait(self, seconds: float) -> str | None:
        self.waits += 1
        if self.waits == 1:
            self.end()
        return super().wait(seconds)


def _stopping_on_cancel(r: Rig, monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """The scheduler's cancel leaves a running object stopping (a job with a grace) until the returned
    function ends it: queries say STOPPING meanwhile."""
    ended = [False]
    query = r.scheduler.query

    def cancel(object_id: ObjectId) -> None:
        r.scheduler.set_state(object_id, ObjectState.STOPPING)

    def stopping_query(names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        result = query(names, confirm_absent=confirm_absent)
        if ended[0]:
            return result
        return replace(result, objects=tuple(replace(v, state=ObjectState.STOPPING) if v.state in ENDED else v
                                             for v in result.objects))

    def end() -> None:
        ended[0] = True

    monkeypatch.setattr(r.scheduler, "cancel", cancel)
    monkeypatch.setattr(r.scheduler, "query", stopping_query)
    return end


def test_a_cancel_says_stopping_while_its_object_stops_and_returns_stopped_once_it_ended(
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    r.scheduler.start(_oid(r, job))
    end = _stopping_on_cancel(r, monkeypatch)
    said: list[CommandResult] = []
    cancel = _EndsOnWait(r, end)
    result = _commands(r)(job, Action.CANCEL, cancel, on_confirmed=said.append)
    assert len(said) == 1 and said[0].stopped is False  # told while it stops
    assert (result.answer, result.by, result.stopped) == (Answer.CONFIRMED, Answerer.THIS_COMMAND, True)
    state = r.state(job)
    assert present(state.outcome).kind is OutcomeKind.CANCELLED  # recorded by the command's own look


def test_a_cancel_whose_object_is_still_stopping_at_the_wait_s_end_says_so() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    r.scheduler.start(_oid(r, job))
    mp = pytest.MonkeyPatch()
    try:
        _stopping_on_cancel(r, mp)
        result = _commands(r, wait=2.0)(job, Action.CANCEL, StopAfter(r.clock))
    finally:
        mp.undo()
    assert (result.answer, result.stopped, result.problem) == (Answer.CONFIRMED, False, "")
    assert r.state(job).outcome is None  # the next look records the end


def test_a_cancel_of_an_object_that_ends_at_once_is_stopped_without_a_stopping_word() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    said: list[CommandResult] = []
    result = _commands(r)(job, Action.CANCEL, StopAfter(r.clock), on_confirmed=said.append)
    assert result.stopped is True and said == []


def test_only_a_cancel_waits_for_a_stop() -> None:
    r = rig(exit_code=None)
    job = _pending(r)
    result = _commands(r)(job, Action.HOLD, StopAfter(r.clock))
    assert result.stopped is None
