"""One contract for every scheduler: what the supervisor may rely on, whichever adapter it drives.

Parametrized over the schedulers in ``scheduler_params.py``: the in-memory fake, the local scheduler
with real processes, the real Slurm, and each of them behind a ``SharedQueryScheduler``. Every
primitive of the port is here; the rules built on them (the residual sweep) have their own suite over
the same schedulers (``test_sweep.py``). The tests at the end are the fake's own scripted faults,
which the supervisor's tests lean on.

``requeue`` has two meanings, both here: Slurm puts a started job back in the queue (the fake
follows Slurm), the local scheduler refuses (an object runs once); the harness says which.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import (
    ENDED,
    CreateOutcome,
    ObjectSpec,
    ObjectState,
    ObjectTimes,
    ObjectView,
    OutputPaths,
    QueryResult,
)
from dunscaith.ports.scheduler import SchedulerError, WatchesChanges
from tests.contract.scheduler_params import SchedulerHarness


def _one(result: QueryResult, object_id: ObjectId) -> ObjectView:
    views = [v for v in result.objects if v.object_id == object_id]
    assert len(views) == 1, result
    return views[0]


def _state_is(object_id: ObjectId, *states: ObjectState) -> Callable[[QueryResult], bool]:
    return lambda r: any(v.object_id == object_id and v.state in states for v in r.objects)


# ---------------------------------------------------------------- failure paths first


def test_an_unknown_object_id_is_refused_by_every_action(harness: SchedulerHarness) -> None:
    for action in (harness.scheduler.release, harness.scheduler.hold, harness.scheduler.cancel):
        with pytest.raises(SchedulerError):
            action(harness.unknown_id)


def test_what_a_scheduler_says_it_cannot_honour_its_create_refuses_and_makes_nothing(
        harness: SchedulerHarness) -> None:
    """refusal() is asked before a job is recorded; create_held must agree, so that a record made before
    the check existed (or by another build) never makes an object the scheduler would have refused."""
    import dataclasses

    from dunscaith.domain.model.jobs.resources import Resources

    assert harness.scheduler.refusal(Resources(), ()) is None  # a job that needs nothing is never refused
    for needs in (Resources(qos="high"), Resources(gpus=1), Resources(queue="q"), Resources(export="NONE")):
        said = harness.scheduler.refusal(needs, ())
        if said is None:
            continue  # honoured here (Slurm honours every need)
        assert said and "\n" not in said
        name = harness.name()
        answer = harness.scheduler.create_held(dataclasses.replace(harness.spec(name, harness.command_exiting(0)),
                                                                   resources=needs))
        assert answer.outcome is CreateOutcome.REFUSED and answer.object_id is None, answer
        assert harness.scheduler.query([name], confirm_absent=False).objects == ()


def test_a_query_for_names_nobody_used_finds_nothing_and_is_complete(harness: SchedulerHarness) -> None:
    harness.created(harness.spec(harness.name(), harness.command_exiting(0)))

    result = harness.scheduler.query([harness.name(), harness.name()], confirm_absent=True)

    assert result.objects == ()
    assert result.complete


def test_a_failing_command_ends_failed_with_its_exit_code(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(3)))

    harness.scheduler.release(object_id)
    result = harness.settle([name], _state_is(object_id, *ENDED))

    view = _one(result, object_id)
    assert view.state is ObjectState.FAILED
    assert view.exit_code == 3
    assert view.started


def test_a_cancelled_held_object_never_starts(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0)))

    harness.scheduler.cancel(object_id)
    with pytest.raises(SchedulerError):
        harness.scheduler.release(object_id)

    view = _one(harness.scheduler.query([name], confirm_absent=True), object_id)
    assert view.state is ObjectState.CANCELLED
    assert not view.started


def test_a_started_object_cannot_be_held(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_running))
    harness.scheduler.release(object_id)
    harness.settle([name], _state_is(object_id, ObjectState.RUNNING))

    with pytest.raises(SchedulerError):
        harness.scheduler.hold(object_id)

    assert _one(harness.scheduler.query([name], confirm_absent=True), object_id).state is ObjectState.RUNNING


# ---------------------------------------------------------------- the life of an object


def test_a_new_object_is_held_and_carries_name_nonce_and_owner(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0), nonce="nonce-of-attempt-1"))

    result = harness.scheduler.query([name], confirm_absent=True)

    assert result.complete
    view = _one(result, object_id)
    assert (view.name, view.nonce, view.state, view.started) == (name, "nonce-of-attempt-1", ObjectState.HELD, False)
    assert view.owner


def test_a_held_object_stays_held_until_released(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0)))

    for _ in range(3):  # each query is a poll: a held object never moves by itself
        assert _one(harness.scheduler.query([name], confirm_absent=True), object_id).state is ObjectState.HELD


def test_a_released_object_runs_to_completed_with_exit_code_0(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0)))

    harness.scheduler.release(object_id)
    result = harness.settle([name], _state_is(object_id, *ENDED))

    view = _one(result, object_id)
    assert (view.state, view.exit_code, view.signal, view.started) == (ObjectState.COMPLETED, 0, None, True)
    assert view.nonce is not None


def test_releasing_twice_is_harmless(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0)))

    harness.scheduler.release(object_id)
    harness.scheduler.release(object_id)

    result = harness.settle([name], _state_is(object_id, *ENDED))
    assert _one(result, object_id).state is ObjectState.COMPLETED
    harness.scheduler.release(object_id)  # after the end too
    assert [v.object_id for v in harness.scheduler.query([name], confirm_absent=True).objects] == [object_id]


def test_a_held_object_can_be_held_again_and_then_released(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0)))

    harness.scheduler.hold(object_id)
    assert _one(harness.scheduler.query([name], confirm_absent=True), object_id).state is ObjectState.HELD
    harness.scheduler.release(object_id)

    result = harness.settle([name], _state_is(object_id, *ENDED))
    assert _one(result, object_id).state is ObjectState.COMPLETED


def test_a_cancelled_running_object_ends_cancelled(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_running))
    harness.scheduler.release(object_id)
    harness.settle([name], _state_is(object_id, ObjectState.RUNNING))

    harness.scheduler.cancel(object_id)
    result = harness.settle([name], _state_is(object_id, *ENDED))

    view = _one(result, object_id)
    assert view.state is ObjectState.CANCELLED
    assert view.started
    harness.scheduler.cancel(object_id)  # cancelling an ended object is harmless


def _announced_until(harness: SchedulerHarness, name: JobId, changes: threading.Event,
                     until: Callable[[QueryResult], bool]) -> QueryResult:
    """Query only when the watch announced a change, until ``until`` holds: the watch alone moves it on."""
    for _ in range(50):
        assert changes.wait(60), "no change announced"
        changes.clear()
        result = harness.scheduler.query([name], confirm_absent=True)
        if until(result):
            return result
    pytest.fail("the watch kept announcing, and the object never got there")


def test_a_watched_objects_start_and_end_are_announced(harness: SchedulerHarness) -> None:
    """WatchesChanges (the local scheduler): the supervisor sleeps on the watch, so whatever moves the
    object on (its start, its end) must be announced; a scheduler without it is polled (Slurm)."""
    scheduler = harness.scheduler
    if not isinstance(scheduler, WatchesChanges):
        pytest.skip("this scheduler does not watch its objects: it is polled")
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0)))
    changes = threading.Event()
    watch = scheduler.watch_changes([object_id], changes.set)
    assert watch is not None
    try:
        assert changes.wait(5), "a new watch announces once at once"
        changes.clear()
        harness.scheduler.release(object_id)
        view = _one(_announced_until(harness, name, changes, _state_is(object_id, *ENDED)), object_id)
        assert view.state is ObjectState.COMPLETED and view.exit_code == 0
    finally:
        watch.close()


def test_a_watched_running_objects_cancel_is_announced_until_it_ends(
        harness: SchedulerHarness) -> None:
    scheduler = harness.scheduler
    if not isinstance(scheduler, WatchesChanges):
        pytest.skip("this scheduler does not watch its objects: it is polled")
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_running))
    harness.scheduler.release(object_id)
    harness.settle([name], _state_is(object_id, ObjectState.RUNNING))
    changes = threading.Event()
    watch = scheduler.watch_changes([object_id], changes.set)
    assert watch is not None
    try:
        harness.scheduler.cancel(object_id)
        view = _one(_announced_until(harness, name, changes, _state_is(object_id, *ENDED)), object_id)
        assert view.state is ObjectState.CANCELLED and view.started
    finally:
        watch.close()


def test_one_query_answers_for_many_names(harness: SchedulerHarness) -> None:
    names = [harness.name() for _ in range(3)]
    made = {harness.created(harness.spec(n, harness.command_exiting(0))): n for n in names}
    extra = harness.created(harness.spec(names[0], harness.command_exiting(0)))
    made[extra] = names[0]
    other = harness.created(harness.spec(harness.name(), harness.command_exiting(0)))

    result = harness.scheduler.query(names, confirm_absent=True)

    assert result.complete
    assert {v.object_id: v.name for v in result.objects} == made
    assert other not in {v.object_id for v in result.objects}


def test_requeue_runs_an_ended_object_again_or_is_refused_where_objects_run_once(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0)))
    harness.scheduler.release(object_id)
    harness.settle([name], _state_is(object_id, *ENDED))

    if not harness.requeues:
        with pytest.raises(SchedulerError):
            harness.scheduler.requeue(object_id)
        assert _one(harness.scheduler.query([name], confirm_absent=True), object_id).state is ObjectState.COMPLETED
        return
    harness.scheduler.requeue(object_id)

    again = _one(harness.scheduler.query([name], confirm_absent=True), object_id)
    assert again.state not in ENDED and again.started  # back in the queue, and it has run: never swept
    result = harness.settle([name], _state_is(object_id, *ENDED))
    assert (_one(result, object_id).state, _one(result, object_id).exit_code) == (ObjectState.COMPLETED, 0)


def test_stop_by_name_stops_every_object_of_the_name_running_ones_too(harness: SchedulerHarness) -> None:
    name, bystander = harness.name(), harness.name()
    running = harness.created(harness.spec(name, harness.command_running))
    held = harness.created(harness.spec(name, harness.command_running))
    spared = harness.created(harness.spec(bystander, harness.command_running))
    for object_id in (running, spared):
        harness.scheduler.release(object_id)
    harness.settle([name, bystander], lambda r: all(v.state is not ObjectState.PENDING for v in r.objects))
    harness.settle([name], _state_is(running, ObjectState.RUNNING))

    stopped = harness.scheduler.stop_by_name(name)

    assert sorted(stopped) == sorted([running, held])
    result = harness.settle([name], lambda r: all(v.state in ENDED for v in r.objects))
    assert {v.object_id: v.state for v in result.objects} == {
        running: ObjectState.CANCELLED,
        held: ObjectState.CANCELLED,
    }
    assert _one(harness.scheduler.query([bystander], confirm_absent=True), spared).state is ObjectState.RUNNING


def test_cancel_if_not_started_stops_held_objects_and_leaves_running_ended_and_unknown_ones(
        harness: SchedulerHarness) -> None:
    name = harness.name()
    first = harness.created(harness.spec(name, harness.command_running))
    second = harness.created(harness.spec(name, harness.command_running))
    running = harness.created(harness.spec(name, harness.command_running))
    ended = harness.created(harness.spec(name, harness.command_exiting(0)))
    for object_id in (running, ended):
        harness.scheduler.release(object_id)
    harness.settle([name], lambda r: _state_is(running, ObjectState.RUNNING)(r) and _state_is(ended, *ENDED)(r))

    stopped = harness.scheduler.cancel_if_not_started([first, running, ended, harness.unknown_id, second])

    assert sorted(stopped) == sorted([first, second])
    result = harness.settle([name], lambda r: all(_state_is(o, *ENDED)(r) for o in (first, second)))
    states = {v.object_id: v.state for v in result.objects}
    assert states == {first: ObjectState.CANCELLED, second: ObjectState.CANCELLED, running: ObjectState.RUNNING,
                      ended: ObjectState.COMPLETED}
    assert not _one(result, first).started and not _one(result, second).started
    assert harness.scheduler.cancel_if_not_started([first, second]) == []  # nothing left to stop
    assert harness.scheduler.cancel_if_not_started([]) == []


def test_a_query_without_confirming_absence_sees_every_live_object(harness: SchedulerHarness) -> None:
    name, nobody = harness.name(), harness.name()
    held = harness.created(harness.spec(name, harness.command_running, nonce="live-1"))

    result = harness.scheduler.query([name, nobody], confirm_absent=False)

    assert result.complete
    assert [(v.object_id, v.nonce, v.state) for v in result.objects] == [(held, "live-1", ObjectState.HELD)]


def test_the_scheduler_acts_as_the_owner_of_the_objects_it_makes(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0)))

    assert _one(harness.scheduler.query([name], confirm_absent=True), object_id).owner == harness.scheduler.user


def test_output_paths_name_the_files_an_object_writes_and_none_for_an_unknown_id(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, ("sh", "-c", "echo out-line; echo err-line >&2")))
    assert harness.scheduler.output_paths(harness.unknown_id) is None
    if not harness.writes_output:
        assert harness.scheduler.output_paths(object_id) is not None
        return

    harness.scheduler.release(object_id)
    harness.settle([name], _state_is(object_id, *ENDED))

    paths = harness.scheduler.output_paths(object_id)
    assert paths is not None and paths.stdout is not None and paths.stderr is not None
    assert "out-line" in Path(paths.stdout).read_text()
    assert "err-line" in Path(paths.stderr).read_text()


def _times_until(harness: SchedulerHarness, object_id: ObjectId, ready: Callable[[ObjectTimes], bool]) -> ObjectTimes:
    """The scheduler's times of ``object_id`` once ``ready`` holds (accounting may lag the controller):
    a deadline, never a fixed sleep."""
    import time

    deadline = time.monotonic() + 60
    while True:
        found = harness.scheduler.times([object_id])
        if object_id in found and ready(found[object_id]):
            return found[object_id]
        if time.monotonic() > deadline:
            pytest.fail(f"the scheduler's times never settled; last answer: {found}")
        time.sleep(0.1)


def test_times_of_an_object_that_ran_are_its_submit_start_and_end_and_an_unknown_id_has_none(
        harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_exiting(0)))
    held = harness.scheduler.times([object_id, harness.unknown_id])
    assert list(held) == [object_id]  # an id the scheduler does not know is left out
    assert held[object_id].submitted is not None and held[object_id].started is None
    assert held[object_id].ended is None

    harness.scheduler.release(object_id)
    harness.settle([name], _state_is(object_id, ObjectState.COMPLETED))
    times = _times_until(harness, object_id, lambda t: t.ended is not None)

    assert times.submitted is not None and times.started is not None and times.ended is not None
    assert times.submitted.tzinfo is not None  # aware: shown in the user's zone, compared with the record's
    assert times.submitted <= times.started <= times.ended
    assert times.source


def test_an_object_cancelled_before_it_started_has_an_end_and_no_start(harness: SchedulerHarness) -> None:
    name = harness.name()
    object_id = harness.created(harness.spec(name, harness.command_running))
    harness.scheduler.cancel(object_id)
    harness.settle([name], _state_is(object_id, ObjectState.CANCELLED))

    times = _times_until(harness, object_id, lambda t: t.ended is not None)

    assert times.started is None, times  # sacct's Start=None: it never ran
    assert times.submitted is not None and times.ended is not None and times.submitted <= times.ended


# ---------------------------------------------------------------- the fake's scripted faults


def _spec(name: str = "job", nonce: str = "n1") -> ObjectSpec:
    return ObjectSpec(name=JobId(name), nonce=Nonce(nonce), command=("true",))


def test_fake_lost_reply_made_the_object_anyway_and_a_query_finds_it_by_nonce() -> None:
    fake = FakeScheduler()
    fake.lose_next_create_reply()

    answer = fake.create_held(_spec(nonce="n-lost"))

    assert (answer.outcome, answer.object_id) == (CreateOutcome.UNKNOWN, None)
    (view,) = fake.query([JobId("job")], confirm_absent=True).objects
    assert (view.nonce, view.state) == ("n-lost", ObjectState.HELD)


def test_fake_refusal_makes_nothing() -> None:
    fake = FakeScheduler()
    fake.refuse_next_create("no such partition")

    answer = fake.create_held(_spec())

    assert (answer.outcome, answer.detail) == (CreateOutcome.REFUSED, "no such partition")
    assert fake.query([JobId("job")], confirm_absent=True).objects == ()
    assert fake.create_held(_spec()).outcome is CreateOutcome.CREATED  # only the next one


def test_fake_failed_query_is_incomplete_and_the_next_one_answers() -> None:
    fake = FakeScheduler()
    fake.create_held(_spec())
    fake.fail_next_query("controller timed out")

    failed = fake.query([JobId("job")], confirm_absent=True)

    assert (failed.objects, failed.complete, failed.detail) == ((), False, "controller timed out")
    assert len(fake.query([JobId("job")], confirm_absent=True).objects) == 1


def test_fake_vanished_object_is_gone_from_queries_and_actions() -> None:
    fake = FakeScheduler()
    object_id = fake.create_held(_spec()).object_id
    assert object_id is not None

    fake.vanish(object_id)

    assert fake.query([JobId("job")], confirm_absent=True) == QueryResult((), complete=True)
    with pytest.raises(SchedulerError):
        fake.cancel(object_id)
    fake.reappear(object_id)
    assert len(fake.query([JobId("job")], confirm_absent=True).objects) == 1


def test_fake_foreign_objects_are_reported_and_never_changed() -> None:
    fake = FakeScheduler(owner="ana")
    theirs = fake.add_foreign(JobId("job"), owner="bob", state=ObjectState.RUNNING)
    unknown_nonce = fake.add_foreign(JobId("job"))

    views = {v.object_id: v for v in fake.query([JobId("job")], confirm_absent=True).objects}

    assert (views[theirs].owner, views[theirs].started) == ("bob", True)
    assert (views[unknown_nonce].owner, views[unknown_nonce].nonce) == ("ana", None)
    with pytest.raises(SchedulerError):
        fake.cancel(theirs)
    assert fake.stop_by_name(JobId("job")) == [unknown_nonce]  # its name, this owner: stopped
    assert views[theirs].state is ObjectState.RUNNING


def test_fake_counts_calls_so_a_test_can_assert_released_once() -> None:
    fake = FakeScheduler()
    object_id = fake.create_held(_spec()).object_id
    assert object_id is not None

    fake.release(object_id)
    fake.release(object_id)

    assert fake.count("release", object_id) == 2
    assert fake.released_times(object_id) == 1
    assert fake.calls["create_held"] == 1


def test_fake_action_fault_before_or_after_the_effect() -> None:
    fake = FakeScheduler()
    first = fake.create_held(_spec(nonce="a")).object_id
    second = fake.create_held(_spec(nonce="b")).object_id
    assert first is not None and second is not None
    fake.fail_next("release", "socket timed out")
    fake.fail_next("release", "socket timed out", applied=True)

    with pytest.raises(SchedulerError, match="socket timed out"):
        fake.release(first)
    with pytest.raises(SchedulerError, match="socket timed out"):
        fake.release(second)

    states = {v.object_id: v.state for v in fake.query([JobId("job")], confirm_absent=True).objects}
    assert states == {first: ObjectState.HELD, second: ObjectState.PENDING}


def test_fake_states_move_by_hand() -> None:
    fake = FakeScheduler()
    ids = [fake.create_held(_spec(nonce=str(i))).object_id for i in range(4)]
    a, b, c, d = (i for i in ids if i is not None)
    for object_id in (a, b, c, d):
        fake.release(object_id)
        fake.start(object_id)

    fake.finish(a, exit_code=2)
    fake.fail_node(b)
    fake.preempt(c)
    fake.kill(d, signal=9)

    views = {v.object_id: v for v in fake.query([JobId("job")], confirm_absent=True).objects}
    assert (views[a].state, views[a].exit_code) == (ObjectState.FAILED, 2)
    assert views[b].state is ObjectState.NODE_FAIL
    assert views[c].state is ObjectState.PREEMPTED
    assert (views[d].state, views[d].signal) == (ObjectState.FAILED, 9)
    fake.requeue(c)
    assert fake.get(c).view.state is ObjectState.PENDING


def test_fake_gradual_cancel_passes_through_stopping() -> None:
    fake = FakeScheduler(gradual_cancel=True)
    object_id = fake.create_held(_spec()).object_id
    assert object_id is not None
    fake.release(object_id)
    fake.start(object_id)

    fake.cancel(object_id)

    assert fake.get(object_id).view.state is ObjectState.STOPPING
    (view,) = fake.query([JobId("job")], confirm_absent=True).objects
    assert view.state is ObjectState.CANCELLED


def test_fake_cancel_if_not_started_never_touches_another_owners_object() -> None:
    fake = FakeScheduler(owner="ana")
    theirs = fake.add_foreign(JobId("job"), owner="bob")
    unknown_nonce = fake.add_foreign(JobId("job"))

    assert fake.cancel_if_not_started([theirs, unknown_nonce]) == [unknown_nonce]
    assert fake.get(theirs).view.state is ObjectState.HELD


def _made(fake: FakeScheduler, nonce: str = "n1") -> ObjectId:
    answer = fake.create_held(_spec(nonce=nonce))
    assert answer.object_id is not None
    return answer.object_id


def test_fake_cancel_if_not_started_follows_slurm_a_requeued_pending_object_is_pending() -> None:
    fake = FakeScheduler()
    object_id, gone = _made(fake), _made(fake, "n2")
    fake.release(object_id)
    fake.start(object_id)
    fake.requeue(object_id)
    fake.vanish(gone)

    assert fake.cancel_if_not_started([object_id, gone]) == [object_id]
    assert fake.get(gone).view.state is ObjectState.HELD


def test_fake_cancel_if_not_started_fault_before_or_after_the_effect() -> None:
    fake = FakeScheduler()
    first = _made(fake)
    fake.fail_next("cancel_if_not_started", "socket timed out")
    fake.fail_next("cancel_if_not_started", "socket timed out", applied=True)

    with pytest.raises(SchedulerError, match="socket timed out"):
        fake.cancel_if_not_started([first])
    assert fake.get(first).view.state is ObjectState.HELD
    with pytest.raises(SchedulerError, match=f"socket timed out \\(stopped {first}\\)"):
        fake.cancel_if_not_started([first])
    assert fake.get(first).view.state is ObjectState.CANCELLED


def test_fake_output_paths_are_what_the_test_set() -> None:
    fake = FakeScheduler()
    object_id = _made(fake)

    assert fake.output_paths(object_id) == OutputPaths(None, None)
    fake.set_output_paths(object_id, OutputPaths("/o", "/e"))
    assert fake.output_paths(object_id) == OutputPaths("/o", "/e")
    fake.vanish(object_id)
    assert fake.output_paths(object_id) is None
