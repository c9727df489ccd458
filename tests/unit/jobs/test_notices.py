"""Notices to notify.command: which a record owes (pure), and their delivery by the supervisor (fakes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.notices import (
    NoticeKind,
    chosen_kinds,
    notice_kinds_problem,
    outcome_notice_id,
    owed,
    sweep_owed,
)
from dunscaith.domain.model.jobs.settlement import outstanding
from dunscaith.domain.model.jobs.snapshot import decode, encode
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import JobState, OutcomeKind, apply
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.services.jobs.notify import Notifier
from dunscaith.domain.services.jobs.supervise import Ending, Supervisor
from dunscaith.ports.escalation_delivery import DeliveryFailed
from tests.expect import present
from tests.unit.jobs.helpers import Rig, rig

AT = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def _state(notify: tuple[str, ...] = ("outcome",), member: SweepMember | None = None) -> JobState:
    spec = JobSpec(JobId("j"), "local", "fake", ("true",), notify=notify, member=member)
    return JobState(spec=spec, host="h", recorded_at=AT)


def _ended(state: JobState) -> JobState:
    return apply(state, ev.OutcomeReached(str(OutcomeKind.FAILED), "failed, exit code 3"), AT)


@pytest.mark.parametrize(("on", "configured", "flag", "kinds"), [
    (["outcome"], True, None, ("outcome",)),
    (["outcome"], False, None, ()),  # no command: nothing to tell
    (["outcome"], True, False, ()),  # --no-notify
    (["gave-up"], True, True, ("outcome", "gave-up")),  # --notify: at least the outcome
    ([], True, None, ()),
    (["gave-up", "escalation", "outcome"], True, None, ("outcome", "escalation", "gave-up")),
])
def test_what_a_job_is_told_of_is_chosen_at_submit(on: list[str], configured: bool, flag: bool | None,
                                                   kinds: tuple[str, ...]) -> None:
    assert chosen_kinds(on, configured, flag) == kinds


@pytest.mark.parametrize(("on", "problem"), [
    (["outcome", "gave-up", "escalation"], None), ([], None),
    (["done"], "notify.on: 'done' is not one of outcome, escalation, gave-up"),
    (["outcome", "outcome"], "notify.on: 'outcome' is given twice"),
])
def test_notify_on_is_checked_in_one_line(on: list[str], problem: str | None) -> None:
    assert notice_kinds_problem(on) == problem


def test_an_outcome_owes_one_notice_until_it_is_delivered_and_it_keeps_the_record_open() -> None:
    state = _state()
    assert owed(state) == []  # no outcome yet
    ended = _ended(state)
    (notice,) = owed(ended)
    assert notice.kind is NoticeKind.OUTCOME and notice.id == outcome_notice_id(ended)
    assert [o.what for o in outstanding(ended)] == [f"notice {notice.id} not yet delivered"]
    delivered = apply(ended, ev.NoticeDelivered(notice.id), AT)
    assert owed(delivered) == [] and outstanding(delivered) == []
    again = apply(delivered, ev.NoticeDelivered(notice.id), AT)  # a second commit of it changes nothing
    assert again.notified == delivered.notified


def test_a_job_not_told_and_a_sweeps_element_owe_no_notice_of_their_own() -> None:
    assert owed(_ended(_state(notify=()))) == []
    assert owed(_ended(_state(member=SweepMember(JobId("s"), 0)))) == []
    from dunscaith.domain.model.jobs.waits import PipelineMember

    step = _state()
    step = replace(step, spec=replace(step.spec, step_of=PipelineMember(JobId("p"), "train")))
    assert owed(_ended(step)) == []  # a pipeline is told once, for its outcome, not per step


def test_escalations_owe_a_notice_each_when_asked_for() -> None:
    state = apply(_state(notify=("escalation",)), ev.Escalated("vanished", 1, "gone"), AT)
    assert [n.index for n in owed(state)] == [0]
    assert owed(_ended(_state(notify=("escalation",)))) == []


def test_the_notices_delivered_survive_a_snapshot() -> None:
    state = _ended(_state(notify=("outcome", "gave-up")))
    state = apply(state, ev.NoticeDelivered(outcome_notice_id(state)), AT)
    back = decode(encode(state, 32), 32)
    assert back.notified == state.notified and back.spec.notify == ("outcome", "gave-up")


def test_the_first_event_keeps_what_the_job_is_told_of_and_writes_nothing_when_it_is_told_nothing() -> None:
    from dunscaith.domain.model.jobs.record import StoreIdentity

    where = StoreIdentity("sqlite", "/r/db", None, 1, 2)
    told = ev.JobRecorded.of(_state().spec, where)
    kind, data = ev.encode(told)
    decoded = ev.decode(kind, data)
    assert isinstance(decoded, ev.JobRecorded)
    assert data["notify"] == ["outcome"] and decoded.spec().notify == ("outcome",)
    _, silent = ev.encode(ev.JobRecorded.of(_state(notify=()).spec, where))
    assert "notify" not in silent  # a record an older dunscaith reads as before


def test_a_sweep_owes_one_notice_once_every_element_has_its_outcome() -> None:
    first = _state(member=SweepMember(JobId("s"), 0))
    assert sweep_owed(JobId("s"), first, ["succeeded", None], 2) is None
    notice = present(sweep_owed(JobId("s"), first, ["succeeded", "failed"], 2))
    done = replace(first, notified=(notice.id,))
    assert sweep_owed(JobId("s"), done, ["succeeded", "failed"], 2) is None
    rerun = present(sweep_owed(JobId("s"), done, ["succeeded", "succeeded"], 3))  # its failed element run again
    assert rerun.id != notice.id
    assert sweep_owed(JobId("s"), replace(first, spec=replace(first.spec, notify=())), ["failed"], 1) is None


# --- delivery by the supervisor --------------------------------------------------------------------------


class FlakyNotices:
    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.tries = 0
        self.got: list[dict[str, Any]] = []

    @property
    def configured(self) -> bool:
        return True

    def deliver(self, notice_id: str, document: Mapping[str, Any]) -> None:
        self.tries += 1
        if self.failures:
            self.failures -= 1
            raise DeliveryFailed("notifier down")
        self.got.append({**document, "delivery_id": notice_id})


def _notifying(r: Rig, notices: FlakyNotices) -> Rig:
    s = r.supervisor
    r.supervisor = Supervisor(r.store, r.scheduler, r.clock, r.crash, r.progress, s._settings, s._policy,
                              nonces=s._nonces, residual=r.residual, capabilities=s._capabilities,
                              notifier=Notifier(notices, r.clock, r.store, "here"))
    return r


def _record(r: Rig, notify: tuple[str, ...] = ("outcome",)) -> JobId:
    from dunscaith.domain.services.jobs.submit import RecordJob

    spec = JobSpec(JobId("j1"), "local", "fake", ("true",), notify=notify)
    return RecordJob(r.store, r.clock, r.crash)(spec)


def test_a_notice_that_fails_twice_is_retried_and_delivered_exactly_once() -> None:
    notices = FlakyNotices(failures=2)
    r = _notifying(rig(exit_code=3, wait=100.0), notices)
    end = r.run(_record(r))
    assert end.ending is Ending.OUTCOME and present(end.state).settled
    assert notices.tries == 3 and len(notices.got) == 1
    (got,) = notices.got
    assert got["job"] == "j1" and got["outcome"] == {"result": "failed", "detail": "failed, exit code 3"}
    assert got["ending"] == "outcome" and got["exit_code"] == 1 and got["notice"] == "outcome"
    assert got["delivery_id"] == outcome_notice_id(present(end.state))
    assert r.kinds(JobId("j1")).count("notice-delivered") == 1
    assert r.kinds(JobId("j1"))[-2:] == ["notice-delivered", "settled"]


def test_a_notice_never_delivered_is_outstanding_work_and_a_later_supervisor_delivers_it_once() -> None:
    notices = FlakyNotices(failures=10_000)
    r = _notifying(rig(exit_code=0, wait=5.0), notices)
    job = _record(r)
    end = r.run(job)
    assert end.ending is Ending.OUTSTANDING and present(end.state).outcome is not None
    assert [o.what.startswith("notice ") for o in end.left] == [True]
    assert notices.tries >= 2  # retried meanwhile, backing off
    working = FlakyNotices()
    r = _notifying(r, working)
    again = r.run(job)
    assert again.ending is Ending.OUTCOME and len(working.got) == 1
    assert r.run(job).ending is Ending.OUTCOME and len(working.got) == 1  # never again once committed


def test_no_notice_is_given_for_a_job_submitted_without_one() -> None:
    notices = FlakyNotices()
    r = _notifying(rig(exit_code=0), notices)
    assert r.run(_record(r, notify=())).ending is Ending.OUTCOME
    assert notices.tries == 0


def test_a_give_up_is_told_once_when_asked_for() -> None:
    notices = FlakyNotices()
    r = _notifying(rig(exit_code=0, giveup=5.0), notices)
    job = _record(r, notify=("outcome", "gave-up"))

    def silent(*args: object, **kwargs: object) -> object:
        raise RuntimeError("no answer")

    r.scheduler.query = silent  # type: ignore[method-assign,assignment]
    end = r.run(job)
    assert end.ending is Ending.GAVE_UP
    assert [g["notice"] for g in notices.got] == ["gave-up"] and notices.got[0]["ending"] == "gave-up"
    assert notices.got[0]["exit_code"] == 4


def test_the_notice_carries_what_json_prints() -> None:
    from dunscaith.domain.model.jobs.job_result import ExitFrom, RecordPlace, job_result
    from dunscaith.entrypoints.dunscaith.render import result_json

    state = _ended(_state())
    result = job_result(state, "/o", "/e", RecordPlace("/r", "sqlite", "h"))
    printed = result_json(result, "j", "outcome", [], 1, ExitFrom.DUNSCAITH)
    from dunscaith.domain.model.jobs.notices import job_notice

    (notice,) = owed(state)
    told = job_notice(result, notice, AT)
    assert {k: v for k, v in told.items() if k in printed} == printed
    assert told["delivery_id"] == notice.id



def test_an_escalation_and_the_outcome_it_makes_are_told_once_each_when_asked_for() -> None:
    from dunscaith.domain.model.jobs.ids import Nonce, ObjectId

    notices = FlakyNotices(failures=1)
    r = _notifying(rig(exit_code=0, wait=100.0), notices)
    job = _record(r, notify=("outcome", "escalation"))
    for event in (ev.Submitting(1, Nonce("n-real")), ev.Created(1, ObjectId("someone-else"))):
        kind, data = ev.encode(event)
        r.store.append(job, r.clock.now(), kind, data)
    r.scheduler.add_foreign(JobId(job), nonce=Nonce("n-real"))  # mismatch: escalated
    end = r.run(job)
    assert present(present(end.state).outcome).kind is OutcomeKind.ESCALATED
    # the escalation's first try failed: the outcome's notice did not wait for its retry
    assert [g["notice"] for g in notices.got] == ["outcome", "escalation"]
    assert notices.got[1]["notice_detail"].startswith("escalation 1 (mismatch): ")
    assert r.kinds(job).count("notice-delivered") == 2


class _Told:
    """A notice delivery that keeps what it was handed."""

    def __init__(self) -> None:
        self.told: list[tuple[str, Mapping[str, Any]]] = []

    @property
    def configured(self) -> bool:
        return True

    def deliver(self, notice_id: str, document: Mapping[str, Any]) -> None:
        self.told.append((notice_id, document))


@pytest.mark.parametrize("wanted", [("outcome", "gave-up"), ("outcome",)])
def test_a_sweeps_supervision_that_gave_up_is_told_once_when_its_jobs_asked_for_it(
        wanted: tuple[str, ...]) -> None:
    from dunscaith.adapters.clock.fake import FakeClock
    from dunscaith.adapters.store.memory import InMemoryStore
    from dunscaith.domain.services.jobs.notify_sweep import NotifySweep
    from dunscaith.domain.services.jobs.submit import RecordJob
    from tests.unit.jobs.helpers import NoCrash

    store, clock, told = InMemoryStore(), FakeClock(), _Told()
    for index in (1, 2):
        spec = JobSpec(JobId(f"exp-{index}"), "local", "fake", ("true",), notify=wanted,
                       member=SweepMember(JobId("exp"), index))
        RecordJob(store, clock, NoCrash())(spec)
    elements = [store.summary(JobId("exp-1")), store.summary(JobId("exp-2"))]
    notify = NotifySweep(store, told, clock, NoCrash(), wait=1.0)
    assert notify.gave_up(JobId("exp"), elements, {"sweep": "exp", "ending": "gave-up"}, "the store stayed away") == ""
    if "gave-up" not in wanted:
        assert told.told == []
        return
    [(notice_id, document)] = told.told
    assert notice_id.startswith("exp@") and "/gave-up@" in notice_id
    assert document["notice"] == "gave-up" and document["notice_detail"] == "the store stayed away"
    assert document["sweep"] == "exp" and document["delivery_id"] == notice_id
