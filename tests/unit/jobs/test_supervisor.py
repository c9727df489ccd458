"""The Supervisor on fakes: FakeClock, InMemoryStore, FakeScheduler with scripted faults."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import pytest

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, ObjectSpec, ObjectState, QueryResult
from dunscaith.domain.model.jobs.record import JobRecord, JsonValue
from dunscaith.domain.model.jobs.residual import ResidualEntry, ResidualPolicy, ResidualReason
from dunscaith.domain.model.jobs.state import AttemptState, Escalation, EscalationReason, OutcomeKind
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.supervise import Ending
from dunscaith.ports.job_store import JobLock, StoreError
from tests.expect import present
from tests.unit.jobs.helpers import Rig, StopAfter, rig


def _append(r: Rig, job: JobId, event: ev.Event) -> None:
    kind, data = ev.encode(event)
    r.store.append(job, r.clock.now(), kind, data)


def test_a_command_that_succeeds_reaches_its_outcome_and_settles() -> None:
    r = rig(exit_code=0)
    job = r.record()
    end = r.run(job)
    assert end.ending is Ending.OUTCOME
    assert present(present(end.state).outcome).kind is OutcomeKind.SUCCEEDED
    kinds = r.kinds(job)
    assert kinds[:5] == ["job-recorded", "submitting", "created", "confirmed", "released"]
    assert kinds[-2:] == ["outcome", "settled"]
    (oid,) = r.scheduler.objects()
    assert r.scheduler.released_times(oid) == 1
    assert r.scheduler.count("create_held") == 1


def test_submitting_is_durable_before_the_create_request_goes_out() -> None:
    r = rig(exit_code=0)
    seen: list[str] = []
    real = r.scheduler.create_held

    def spying(spec: ObjectSpec) -> CreateAnswer:
        seen.append(r.kinds(spec.name)[-1])
        return real(spec)

    r.scheduler.create_held = spying  # type: ignore[method-assign]
    r.run(r.record())
    assert seen == ["submitting"]


def test_a_failing_command_is_an_outcome_that_is_not_success() -> None:
    r = rig(exit_code=7)
    end = r.run(r.record())
    assert end.ending is Ending.OUTCOME
    assert present(present(end.state).outcome).kind is OutcomeKind.FAILED
    assert "exit code 7" in present(present(end.state).outcome).detail


def test_a_lost_create_reply_is_recorded_unknown_never_resent_and_found_by_its_nonce() -> None:
    r = rig(exit_code=0)
    r.scheduler.lose_next_create_reply("socket timed out")
    job = r.record()
    end = r.run(job)
    assert r.scheduler.count("create_held") == 1
    assert present(present(end.state).outcome).kind is OutcomeKind.SUCCEEDED
    kinds = r.kinds(job)
    assert kinds[1:5] == ["submitting", "unknown", "found", "confirmed"]
    (oid,) = r.scheduler.objects()
    assert present(end.state).attempts[0].object_id == oid
    assert r.scheduler.released_times(oid) == 1


def test_a_refused_create_is_the_outcome_and_nothing_is_released() -> None:
    r = rig(exit_code=0)
    r.scheduler.refuse_next_create("invalid partition")
    end = r.run(r.record())
    assert present(present(end.state).outcome).kind is OutcomeKind.REFUSED
    assert r.scheduler.count("release") == 0


def test_a_node_failure_is_tried_again_in_a_new_attempt_with_a_new_nonce() -> None:
    r = rig(exit_code=None)
    job = r.record()
    failed_once = {"done": False}
    real = r.scheduler.query

    def query(names: Sequence[JobId], **kw: bool) -> QueryResult:
        for oid, obj in r.scheduler.objects().items():
            if obj.view.state is ObjectState.PENDING:
                if not failed_once["done"]:
                    failed_once["done"] = True
                    r.scheduler.fail_node(oid)
                else:
                    r.scheduler.finish(oid, 0)
        return real(names, **kw)

    r.scheduler.query = query  # type: ignore[method-assign]
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.SUCCEEDED
    first, second = present(end.state).attempts
    assert first.object_state is ObjectState.NODE_FAIL and first.nonce != second.nonce
    assert r.scheduler.count("create_held") == 2


def test_preemption_on_every_attempt_fails_after_max_attempts() -> None:
    r = rig(exit_code=None)
    job = r.record(max_attempts=2)
    real = r.scheduler.query

    def query(names: Sequence[JobId], **kw: bool) -> QueryResult:
        for oid, obj in r.scheduler.objects().items():
            if obj.view.state is ObjectState.PENDING:
                r.scheduler.preempt(oid)
        return real(names, **kw)

    r.scheduler.query = query  # type: ignore[method-assign]
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.FAILED
    assert len(present(end.state).attempts) == 2


def test_a_released_object_that_vanishes_is_escalated_after_the_deadline_not_before() -> None:
    r = rig(exit_code=None, absence=5.0, poll=1.0)
    job = r.record()
    real = r.scheduler.query

    def query(names: Sequence[JobId], **kw: bool) -> QueryResult:
        for oid, obj in r.scheduler.objects().items():
            if obj.view.state is ObjectState.PENDING:
                r.scheduler.vanish(oid)
        return real(names, **kw)

    r.scheduler.query = query  # type: ignore[method-assign]
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.ESCALATED
    assert "vanished" in present(present(end.state).outcome).detail
    absent_at = next(line.at for line in r.store.read(job).events if line.kind == "absent")
    escalated_at = next(line.at for line in r.store.read(job).events if line.kind == "escalated")
    assert (escalated_at - absent_at).total_seconds() > 5.0


def _never_shows(r: Rig, nonce: str = "n1") -> None:
    """The first create's reply is lost and its object never shows (it was never really made)."""
    r.scheduler.lose_next_create_reply()
    real_create = r.scheduler.create_held

    def create(spec: ObjectSpec) -> CreateAnswer:
        answer = real_create(spec)
        if spec.nonce == Nonce(nonce):
            for oid, obj in r.scheduler.objects().items():
                if obj.view.nonce == spec.nonce:
                    r.scheduler.vanish(oid)
        return answer

    r.scheduler.create_held = create  # type: ignore[method-assign]


def test_an_unknown_attempt_never_seen_moves_to_the_residual_list_and_the_record_settles() -> None:
    r = rig(exit_code=0, absence=3.0, wait=5.0)
    _never_shows(r)
    job = r.record()
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.SUCCEEDED
    assert end.ending is Ending.OUTCOME and present(end.state).settled
    assert present(end.state).attempts[0].order is AttemptState.UNKNOWN and present(end.state).attempts[0].residual
    (entry,) = [reading.entry for reading in r.residual.entries()]
    assert entry is not None and (entry.job, entry.attempt, entry.nonce, entry.reason) == (
        job, 1, Nonce("n1"), ResidualReason.UNKNOWN)
    assert r.kinds(job)[-3:] == ["outcome", "moved-to-residual", "settled"]


def test_under_the_manual_policy_an_unknown_attempt_escalates_and_the_record_waits() -> None:
    r = rig(exit_code=0, absence=3.0, wait=5.0, residual_policy=ResidualPolicy.MANUAL)
    _never_shows(r)
    job = r.record()
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.SUCCEEDED
    assert end.ending is Ending.OUTSTANDING and not present(end.state).settled
    assert [o.attempt for o in end.left] == [1]
    assert [e.reason for e in present(end.state).escalations][-1] is EscalationReason.UNKNOWN_ATTEMPT
    assert r.kinds(job).count("escalated") == 2  # vanished (it never showed), then unknown-attempt, once
    assert r.residual.entries() == []


def test_a_residual_list_that_cannot_be_written_keeps_the_attempt_outstanding() -> None:
    r = rig(exit_code=0, absence=3.0, wait=5.0)
    _never_shows(r)

    def refuse(entry: ResidualEntry) -> bool:
        raise OSError("home is read-only")

    r.residual.add = refuse  # type: ignore[method-assign]
    end = r.run(r.record())
    assert end.ending is Ending.OUTSTANDING and not present(end.state).attempts[0].residual


def test_a_late_object_of_an_unknown_attempt_found_after_the_outcome_is_cancelled_never_released() -> None:
    # under the manual policy the record waits for the attempt, so the supervisor itself finds its object
    # (under the default one the attempt is on the residual list by then, and a sweep stops the object)
    r = rig(exit_code=0, absence=3.0, wait=50.0, residual_policy=ResidualPolicy.MANUAL)
    r.scheduler.lose_next_create_reply()
    job = r.record()
    late: list[ObjectId] = []
    real_create = r.scheduler.create_held

    def create(spec: ObjectSpec) -> CreateAnswer:
        answer = real_create(spec)
        if spec.nonce == Nonce("n1"):
            late.extend(o for o, obj in r.scheduler.objects().items() if obj.view.nonce == spec.nonce)
            r.scheduler.vanish(late[0])
        return answer

    r.scheduler.create_held = create  # type: ignore[method-assign]
    real_query = r.scheduler.query

    def query(names: Sequence[JobId], **kw: bool) -> QueryResult:
        if any(obj.view.state is ObjectState.COMPLETED for obj in r.scheduler.objects().values()):
            r.scheduler.reappear(late[0])
        return real_query(names, **kw)

    r.scheduler.query = query  # type: ignore[method-assign]
    end = r.run(job)
    assert end.ending is Ending.OUTCOME and present(end.state).settled
    assert r.scheduler.released_times(late[0]) == 0
    assert r.scheduler.get(late[0]).view.state is ObjectState.CANCELLED


def test_a_scheduler_that_stops_answering_makes_the_supervisor_give_up() -> None:
    r = rig(exit_code=None, giveup=5.0, poll=1.0)
    job = r.record()
    r.scheduler.query = lambda names, **kw: (_ for _ in ()).throw(OSError("controller down"))  # type: ignore
    end = r.run(job)
    assert end.ending is Ending.GAVE_UP
    assert "controller down" in end.detail
    assert r.scheduler.count("cancel") == 0


def test_a_stop_request_drains_and_never_cancels_the_job() -> None:
    r = rig(exit_code=None)
    job = r.record()
    end = r.run(job, StopAfter(r.clock, waits=2))
    assert end.ending is Ending.DRAINED
    assert r.scheduler.count("cancel") == 0
    assert r.state(job).attempts[0].order is AttemptState.RELEASED
    assert r.store.health(job).held is False


def test_reattaching_after_a_crash_mid_create_records_unknown_and_never_resends() -> None:
    r = rig(exit_code=0, absence=3.0, wait=2.0)
    job = r.record()
    _append(r, job, ev.Submitting(1, Nonce("old")))
    end = r.run(job)
    kinds = r.kinds(job)
    assert kinds[2] == "unknown"
    assert all(spec_nonce != "old" for _, spec_nonce in
               [(m, a.nonce) for m, a in r.scheduler.log if m == "create_held" and hasattr(a, "nonce")])
    assert present(end.state).attempts[0].order is AttemptState.UNKNOWN
    assert present(present(end.state).outcome).kind is OutcomeKind.SUCCEEDED


def test_an_object_carrying_our_nonce_under_another_id_is_escalated_never_released() -> None:
    r = rig(exit_code=0)
    job = r.record()
    _append(r, job, ev.Submitting(1, Nonce("n-real")))
    _append(r, job, ev.Created(1, ObjectId("someone-else")))
    other = r.scheduler.add_foreign(JobId(job), nonce=Nonce("n-real"))
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.ESCALATED
    assert "mismatch" in present(present(end.state).outcome).detail
    assert r.scheduler.count("release") == 0
    assert r.scheduler.get(other).view.state is ObjectState.HELD


def test_the_loop_beats_the_lock_and_reports_supervised_at_rarely() -> None:
    r = rig(exit_code=None, giveup=1000.0)
    job = r.record()
    end = r.run(job, StopAfter(r.clock, waits=25))
    assert end.ending is Ending.DRAINED
    assert r.store.health(job).last_loop is not None
    assert 2 <= len(r.progress.alive) <= 3


def test_a_store_that_fails_to_append_keeps_the_answer_and_commits_it_later() -> None:
    from dunscaith.ports.job_store import StoreError

    r = rig(exit_code=0, giveup=100.0)
    job = r.record()
    real_append = r.store.append
    failures = {"left": 3}

    def append(job: JobId, at: datetime, kind: str, data: Mapping[str, JsonValue]) -> int:
        if kind == "created" and failures["left"]:
            failures["left"] -= 1
            raise StoreError("disk full")
        return real_append(job, at, kind, data)

    r.store.append = append  # type: ignore[method-assign]
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.SUCCEEDED
    assert r.scheduler.count("create_held") == 1
    assert r.kinds(job).count("created") == 1


def test_an_old_running_job_is_queried_less_often_but_the_loop_still_beats_every_interval() -> None:
    r = rig(exit_code=None, poll=10.0, giveup=10_000.0)
    job = r.record()
    r.run(job, StopAfter(r.clock, waits=360))  # an hour of loops at the default interval
    queries = r.scheduler.count("query")
    assert 20 < queries < 120  # 5 per minute at first, then every 20, 40, 80, 160 s
    assert r.store.health(job).last_loop == r.clock.now() - __import__("datetime").timedelta(seconds=10)


class FlakyDelivery:
    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.tries = 0
        self.got: list[tuple[str, int]] = []

    @property
    def configured(self) -> bool:
        return True

    def deliver(self, job: JobId, index: int, escalation: Escalation) -> None:
        from dunscaith.ports.escalation_delivery import DeliveryFailed

        self.tries += 1
        if self.failures:
            self.failures -= 1
            raise DeliveryFailed("notifier down")
        self.got.append((str(escalation.reason), index))


def test_escalations_are_delivered_retried_on_failure_and_never_hold_up_the_outcome() -> None:
    r = rig(exit_code=0, wait=100.0)
    delivery = FlakyDelivery(failures=2)
    r.supervisor = type(r.supervisor)(r.store, r.scheduler, r.clock, r.crash, r.progress,
                                      r.supervisor._settings, r.supervisor._policy,
                                      nonces=r.supervisor._nonces, delivery=delivery)
    job = r.record()
    _append(r, job, ev.Submitting(1, Nonce("n-real")))
    _append(r, job, ev.Created(1, ObjectId("someone-else")))
    r.scheduler.add_foreign(JobId(job), nonce=Nonce("n-real"))  # mismatch: escalated
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.ESCALATED
    assert delivery.got == [("mismatch", 0)] and delivery.tries == 3
    assert r.kinds(job).count("escalation-delivered") == 1
    assert present(end.state).escalations[0].delivered


def test_a_submitting_event_that_never_became_durable_sends_nothing_and_is_not_unknown() -> None:
    from dunscaith.ports.job_store import StoreError

    r = rig(exit_code=0, giveup=100.0)
    job = r.record()
    real_append = r.store.append
    failures = {"left": 2}

    def append(job: JobId, at: datetime, kind: str, data: Mapping[str, JsonValue]) -> int:
        if kind == "submitting" and failures["left"]:
            failures["left"] -= 1
            raise StoreError("disk full")
        return real_append(job, at, kind, data)

    r.store.append = append  # type: ignore[method-assign]
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.SUCCEEDED
    assert r.scheduler.count("create_held") == 1
    assert [a.order for a in present(end.state).attempts] == [AttemptState.RELEASED]


@pytest.mark.parametrize("kind", ["submitting", "created", "released", "outcome"])
def test_an_append_that_failed_after_landing_is_never_written_twice(kind: str) -> None:
    from dunscaith.ports.job_store import StoreError

    r = rig(exit_code=0, giveup=100.0)
    job = r.record()
    real_append = r.store.append
    failures = {"left": 1}

    failing = kind

    def append(job: JobId, at: datetime, kind: str, data: Mapping[str, JsonValue]) -> int:
        seq = real_append(job, at, kind, data)
        if kind == failing and failures["left"]:
            failures["left"] -= 1
            raise StoreError("connection lost after commit")
        return seq

    r.store.append = append  # type: ignore[method-assign]
    end = r.run(job)
    assert end.ending is Ending.OUTCOME and present(present(end.state).outcome).kind is OutcomeKind.SUCCEEDED
    assert r.kinds(job).count(kind) == 1
    assert r.scheduler.count("create_held") == 1
    assert r.state(job).settled  # the record reads whole and tells one story


def test_the_release_follows_the_confirming_query_at_once() -> None:
    r = rig(exit_code=0, poll=10.0)
    job = r.record()
    r.run(job)
    at = {line.kind: line.at for line in r.store.read(job).events}
    assert at["released"] == at["confirmed"]  # no wait for the next tick between the two


def test_polls_start_short_after_each_change_and_double_to_the_poll_interval() -> None:
    r = rig(exit_code=None, poll=10.0, giveup=10_000.0)
    job = r.record()
    asked: list[float] = []
    real = r.scheduler.query

    def spying(names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        asked.append(r.clock.monotonic())
        return real(names, confirm_absent=confirm_absent)

    r.scheduler.query = spying  # type: ignore[method-assign]
    r.run(job, StopAfter(r.clock, waits=12))
    from itertools import pairwise
    gaps = [round(b - a, 3) for a, b in pairwise(asked)]
    # after the release (a change): 0.25 s, then doubling (each on its own shared tick, so a gap may be
    # shorter than its interval), reaching the 10 s ticks within 16 s, never longer
    assert gaps[0] == 0.25 and all(0 < g <= 10.0 for g in gaps)
    short = [g for g in gaps if g < 10.0]
    assert 4 <= len(short) <= 8 and sum(short) <= 16.0
    assert gaps[len(short):] and all(g == 10.0 for g in gaps[len(short):])


def test_an_answer_asked_before_the_last_action_never_becomes_an_observation() -> None:
    from dataclasses import replace as dc_replace
    from datetime import timedelta

    r = rig(exit_code=None)
    job = r.record()
    real = r.scheduler.query
    old: list[QueryResult] = []

    def older(names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        result = real(names, confirm_absent=confirm_absent)
        if not old:  # the first answer (showing the object held) is kept and handed out again, stale
            old.append(result)
        if (current := r.state(job).current) is not None and current.order is AttemptState.RELEASED and len(old) < 3:
            old.append(result)
            return dc_replace(old[0], asked_at=r.clock.now() - timedelta(seconds=3))
        return dc_replace(result, asked_at=r.clock.now())

    r.scheduler.query = older  # type: ignore[method-assign]
    r.run(job, StopAfter(r.clock, waits=6))
    state = r.state(job)
    assert present(state.current).order is AttemptState.RELEASED
    observed = [e for e in r.progress.events if isinstance(e, ev.Observed)]
    assert all(o.state != "held" for o in observed)  # the stale "held" never came back after the release
    assert r.scheduler.released_times(present(present(state.current).object_id)) == 1


def test_a_record_that_stays_unreadable_while_the_scheduler_answers_makes_the_supervisor_give_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22 item 4: a store that answers nothing (its tables locked, its server stopped) while the
    scheduler answers every query; the loop cannot read the requests committed to it, so it does not advance."""
    r = rig(exit_code=None, giveup=5.0, poll=1.0)
    job = r.record()
    reads = {"n": 0}
    real_read = r.store.read

    def read(name: JobId) -> JobRecord:
        reads["n"] += 1
        if reads["n"] > 3:  # the first reads (start, a loop or two) went through: the job is released
            raise StoreError("record store S does not answer: its tables are locked by another session")
        return real_read(name)

    monkeypatch.setattr(r.store, "read", read)
    end = r.run(job)
    assert end.ending is Ending.GAVE_UP
    assert "the record could not be read" in end.detail and "tables are locked" in end.detail
    assert r.scheduler.count("cancel") == 0 and r.scheduler.count("create_held") == 1


def test_a_loop_whose_beat_is_never_recorded_gives_up() -> None:
    """The loop's health is what its beat records (seed 000): a beat that fails every time is health
    that stops advancing, and after supervise.giveup the supervisor stops."""
    r = rig(exit_code=None, giveup=5.0, poll=1.0)
    job = r.record()

    class NoBeat:
        def __init__(self, inner: JobLock) -> None:
            self._inner = inner

        def check(self) -> None:
            self._inner.check()

        def beat(self, at: datetime, next_at: datetime | None = None) -> None:
            raise StoreError("record store S does not answer: the server did not answer within 2 s")

    with r.store.lock(job) as lock:
        end = supervise_one(r.supervisor, job, NoBeat(lock), StopAfter(r.clock))
    assert end.ending is Ending.GAVE_UP
    assert "could not record the loop" in end.detail and "did not answer within 2 s" in end.detail


class _ReasonAfter(StopAfter):
    """At the fourth sleep the running object gains a reason (its process owner's disk is full)."""

    def __init__(self, r: Rig) -> None:
        super().__init__(r.clock, waits=40)
        self._r, self._sleeps = r, 0

    def wait(self, seconds: float) -> str | None:
        self._sleeps += 1
        if self._sleeps == 4:
            (object_id,) = self._r.scheduler.objects()
            self._r.scheduler.set_state(object_id, ObjectState.RUNNING, reason="disk full: the worker ended with "
                                        "exit code 0; its outcome is kept by the process owner")
        return super().wait(seconds)


def test_a_running_objects_reason_is_said_once_in_the_live_view() -> None:
    """Issue 22 item 2: the live view says "disk full" while an outcome waits for space, once, whether or
    not the observation can be recorded (the record may be on that disk)."""
    r = rig(exit_code=None)
    job = r.record()
    r.run(job, _ReasonAfter(r))
    said = [n for n in r.progress.notes if "disk full" in n]
    assert said == ["attempt 1: " + str(next(iter(r.scheduler.objects()))) + " is running: disk full: the worker "
                    "ended with exit code 0; its outcome is kept by the process owner"]
