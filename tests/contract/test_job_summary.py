"""The summary a store keeps with every append is the fold of the record, whichever store and event kind.

``summary == summarize(fold(events))`` after every append, for records that read and for records that
stop reading (then the summary says why, as the fold does). Appends from a second handle on the same
store (another process, for SQLite: a command beside a supervisor) make the first handle's carried fold
stale; it must notice and fold again. ``rebuild_summaries`` (a migration, doctor) gives the same rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.record import StoreIdentity
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery, summarize, unreadable
from dunscaith.domain.model.jobs.sweeps import SweepMember, element_name
from dunscaith.ports.job_store import Append, JobStore
from tests.contract.test_job_store import T0, Backend, backend  # noqa: F401 - the store fixture's parameters
from tests.unit.jobs.test_domain_tables import EVERY_EVENT, SPEC

HEAD = ev.JobRecorded.of(SPEC, StoreIdentity("memory", "m"))
# Every kind (the round-trip cases), and a few more in the shapes a record's story takes: a second attempt,
# several requests and their answers, an escalation before its delivery.
EVENTS: Sequence[ev.Event] = [e for e in EVERY_EVENT if not isinstance(e, ev.JobRecorded)] + [
    ev.Submitting(2, Nonce("n2")), ev.Created(2, ObjectId("o2")), ev.Released(2, ObjectId("o2")),
    ev.Observed(2, ObjectId("o2"), "running", None, None, ""), ev.Requested("r2", "cancel"),
    ev.Answered("r2", "refused", "no"), ev.Answered("r1", "refused", "late"), ev.Requested("r3", "give-up"),
    ev.Answered("r3", "confirmed", ""), ev.Escalated("mismatch", 1, "d"), ev.Delivered(1),
    ev.OutcomeReached("failed", "exit 1"), ev.MovedToResidual(2, "unknown"),
]
names = (f"job-{i}" for i in itertools.count())


def expected(store: JobStore, job: JobId) -> JobSummary:
    record = store.read(job)
    last = record.events[-1]
    try:
        return summarize(fold(record), last.seq, job)
    except JobsError as exc:
        return unreadable(job, last.seq, record.events[0].at, last.at, str(exc))


def _append_all(store: JobStore, other: JobStore, job: JobId, story: list[tuple[ev.Event, bool]],
                head: ev.Event = HEAD) -> None:
    store.create(job, T0, *ev.encode(head))
    assert store.summary(job) == expected(store, job)
    for i, (event, by_other) in enumerate(story, start=1):
        (other if by_other else store).append(job, T0 + timedelta(seconds=i), *ev.encode(event))
        assert store.summary(job) == expected(store, job), f"after event {i} ({event.KIND})"
        assert other.summary(job) == store.summary(job)


def test_every_kind_in_record_order_keeps_the_summary_equal_to_the_fold(backend: Backend) -> None:  # noqa: F811
    store, other = backend.open(), backend.open()
    steps: list[ev.Event]  # of every kind
    steps = [ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("o1")), ev.Confirmed(1, ObjectId("o1")),
             ev.Released(1, ObjectId("o1")), ev.Requested("r1", "hold"), ev.Answered("r1", "confirmed", ""),
             ev.HeldByUser(1, ObjectId("o1")), ev.Observed(1, ObjectId("o1"), "running", None, None, ""),
             ev.Absent(1), ev.Escalated("vanished", 1, "d"), ev.Delivered(0), ev.Requeueing(1, ObjectId("o1")),
             ev.Requeued(1, ObjectId("o1")), ev.ActionFailed("hold", 1, "started"), ev.Cancelling(1, ObjectId("o1")),
             ev.Submitting(2, Nonce("n2")), ev.Unknown(2, "u"), ev.Found(2, ObjectId("o2")),
             ev.Submitting(3, Nonce("n3")), ev.Refused(3, "r"), ev.MovedToResidual(2, "unknown"),
             ev.OutcomeReached("succeeded", ""), ev.NoticeDelivered("n"), ev.Settled(), ev.Pruned()]
    assert {e.KIND for e in steps} | {HEAD.KIND} == {e.KIND for e in EVERY_EVENT}
    job = JobId(next(names))
    _append_all(store, other, job, [(e, i % 3 == 2) for i, e in enumerate(steps)])
    last = store.summary(job)
    assert last.problem is None and last.settled and last.pruned_at is not None and last.attempts == 3
    assert [s.job for s in store.summaries(SummaryQuery())] == []  # pruned: off the list
    assert [s.job for s in store.summaries(SummaryQuery(include_pruned=True))] == [job]


@pytest.mark.parametrize("head", [HEAD, ev.Settled()], ids=["job-recorded", "no-head"])
def test_a_record_that_stops_reading_keeps_a_summary_saying_why(backend: Backend, head: ev.Event) -> None:  # noqa: F811
    store = backend.open()
    job = JobId(next(names))
    _append_all(store, store, job, [(ev.Created(1, ObjectId("o")), False), (ev.Submitting(1, Nonce("n")), False)],
                head=head)
    summary = store.summary(job)
    assert summary.state == "damaged" and summary.problem and summary.seq == 3
    assert store.unsettled() == []  # a record that does not read is never called Unattended from here


def test_phases_of_many_jobs_in_one_transaction_each_keep_every_summary_equal_to_the_fold(
        backend: Backend) -> None:  # noqa: F811
    """More jobs than a store carries folds for by default, a job named twice in one phase, and another
    handle's append between two phases: each summary, written once per job per phase, is still the fold."""
    store, other = backend.open(), backend.open()
    jobs = [JobId(next(names)) for _ in range(100)]
    for job in jobs:
        store.create(job, T0, *ev.encode(HEAD))
    phases: list[list[tuple[JobId, ev.Event]]] = [
        [(job, ev.Submitting(1, Nonce("n"))) for job in jobs],
        [(job, ev.Created(1, ObjectId(f"o_{i}"))) for i, job in enumerate(jobs)]
        + [(jobs[0], ev.Requested("r", "hold"))],
        [(job, ev.Released(1, ObjectId(f"o_{i}"))) for i, job in enumerate(jobs)],
    ]
    for number, phase in enumerate(phases, start=1):
        at = T0 + timedelta(seconds=number)
        store.append_many([Append(job, at, *ev.encode(event)) for job, event in phase])
        if number == 2:
            other.append(jobs[7], at, *ev.encode(ev.Requested("r7", "hold")))
        for job in jobs:
            assert store.summary(job) == expected(store, job), f"{job} after phase {number}"
    assert store.summary(jobs[0]).seq == 5 and store.summary(jobs[7]).seq == 5 and store.summary(jobs[1]).seq == 4


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(story=st.lists(st.tuples(st.sampled_from(EVENTS), st.booleans()), max_size=14))
def test_the_summary_is_the_fold_after_every_append(backend: Backend, story: list[tuple[ev.Event, bool]]) -> None:  # noqa: F811
    store, other = backend.open(), backend.open()
    job = JobId(next(names))
    _append_all(store, other, job, [(ev.Submitting(1, Nonce("n1")), False), *story])
    before = list(store.summaries(SummaryQuery(include_pruned=True)))
    assert store.rebuild_summaries() == len(before)
    assert list(store.summaries(SummaryQuery(include_pruned=True))) == before


def test_list_is_newest_first_filtered_and_limited_and_counts_the_rest(backend: Backend) -> None:  # noqa: F811
    store = backend.open()
    made = [JobId(next(names)) for _ in range(5)]
    with store.batch():
        for i, job in enumerate(made):
            store.create(job, T0 + timedelta(minutes=i), *ev.encode(HEAD))
            if i % 2:
                store.append(job, T0, *ev.encode(ev.Submitting(1, Nonce("n"))))
    newest = list(reversed(made))
    assert [s.job for s in store.summaries(SummaryQuery())] == newest
    assert [s.job for s in store.summaries(SummaryQuery(limit=2))] == newest[:2]
    assert store.count(SummaryQuery(limit=2)) == 5
    assert [s.job for s in store.summaries(SummaryQuery(state="submitting"))] == [made[3], made[1]]
    assert [s.job for s in store.summaries(SummaryQuery(since=T0 + timedelta(minutes=3)))] == newest[:2]
    assert store.count(SummaryQuery(cluster="elsewhere")) == 0
    assert [s.job for s in store.unsettled()] == made  # oldest first, none settled


def test_a_name_prefix_chooses_the_jobs_whose_names_begin_so(backend: Backend) -> None:  # noqa: F811
    # a pipeline's jobs (study.train-0, study.reduce) are found by the prefix "study.", and only they: not
    # study2.x, nor a job whose name holds "study." further on, nor one where '_' or '%' would match in LIKE
    store = backend.open()
    names = ["study.train-0", "study.reduce", "study2.x", "a.study.b", "study", "stud_.x", "study_x"]
    with store.batch():
        for i, job in enumerate(names):
            store.create(JobId(job), T0 + timedelta(minutes=i), *ev.encode(HEAD))
    found = sorted(s.job for s in store.summaries(SummaryQuery(include_pruned=True, prefix="study.")))
    assert found == ["study.reduce", "study.train-0"]
    assert store.count(SummaryQuery(prefix="study.")) == 2
    assert store.count(SummaryQuery(prefix="stud_.")) == 1


def _element(sweep: str, index: int) -> ev.JobRecorded:
    spec = JobSpec(element_name(JobId(sweep), index), "local", "local", ("echo", str(index)),
                   member=SweepMember(JobId(sweep), index, 2))
    return ev.JobRecorded.of(spec, StoreIdentity("memory", "m"))


def test_a_sweeps_elements_are_asked_for_by_its_name_and_counted(backend: Backend) -> None:  # noqa: F811
    store = backend.open()
    sweep = next(names)
    with store.batch():
        for i in range(4):
            store.create(element_name(JobId(sweep), i), T0 + timedelta(minutes=i), *ev.encode(_element(sweep, i)))
        store.create(element_name(JobId("other"), 0), T0, *ev.encode(_element("other", 0)))
        store.create(JobId(f"{sweep}-9"), T0, *ev.encode(HEAD))  # named like an element, but a job of its own
    store.append(JobId(f"{sweep}-1"), T0, *ev.encode(ev.Submitting(1, Nonce("n"))))
    for event in (ev.OutcomeReached("cancelled", ""), ev.Settled(), ev.Pruned()):
        store.append(JobId(f"{sweep}-3"), T0, *ev.encode(event))
    newest = [JobId(f"{sweep}-{i}") for i in (2, 1, 0)]  # the pruned one aside
    assert [s.job for s in store.summaries(SummaryQuery(sweep=sweep))] == newest
    assert [(s.sweep, s.sweep_index) for s in store.summaries(SummaryQuery(sweep=sweep))] == [
        (sweep, 2), (sweep, 1), (sweep, 0)]
    assert store.count(SummaryQuery(sweep=sweep)) == 3
    assert store.count(SummaryQuery(sweep=sweep, include_pruned=True)) == 4
    assert [s.job for s in store.summaries(SummaryQuery(sweep=sweep, state="submitting"))] == [f"{sweep}-1"]
    assert [s.job for s in store.summaries(SummaryQuery(sweep=sweep, limit=1))] == newest[:1]
    assert store.count(SummaryQuery(sweep="no-such-sweep")) == 0
    mine = store.summary(JobId(f"{sweep}-9"))
    assert (mine.sweep, mine.sweep_index) == (None, None)
    assert store.summary(JobId(f"{sweep}-0")) == expected(store, JobId(f"{sweep}-0"))
    before = list(store.summaries(SummaryQuery(include_pruned=True)))
    store.rebuild_summaries()  # the events are the truth: the same two values again
    assert list(store.summaries(SummaryQuery(include_pruned=True))) == before
