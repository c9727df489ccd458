"""Every store's snapshot of a record, with the lines after it, folds to what the whole record does.

``status`` folds ``read_tail`` (the newest snapshot and the events after it) and falls back to the whole
record when that does not serve, so what it shows must be ``fold(read)`` exactly, for every story and
every store: the same state when the record reads, the same refusal when it does not. The stores here
keep a snapshot every three events (snapshot.EVERY is 32), so every story crosses several; appends
from a second handle (another process: a command beside a supervisor) make the first handle's carried
fold stale, and the snapshots it then makes must be as good. ``rebuild_summaries`` (doctor) makes the
same snapshots from the events alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.snapshot import resumed
from dunscaith.domain.model.jobs.state import JobState, fold
from dunscaith.ports.job_store import Append, JobStore
from tests.contract.test_job_store import T0
from tests.contract.test_job_summary import EVENTS, HEAD

EVERY = 3
names = (f"job-{i}" for i in itertools.count())


@dataclass
class Snapshotting:
    open: Callable[[], JobStore]  # a new handle on the same records, keeping a snapshot every EVERY events
    opened: list[Any] = field(default_factory=list)


def _memory(tmp_path: Path, request: pytest.FixtureRequest) -> Snapshotting:
    store = InMemoryStore(snapshot_every=EVERY)
    return Snapshotting(lambda: store)


def _sqlite(tmp_path: Path, request: pytest.FixtureRequest) -> Snapshotting:
    made = Snapshotting(lambda: _keep(made, SqliteStore.open(tmp_path / "records", SystemHost(),
                                                             snapshot_every=EVERY)))
    return made


def _postgresql(tmp_path: Path, request: pytest.FixtureRequest) -> Snapshotting:
    server = request.getfixturevalue("postgres_server")
    url = server.url(server.new_database())
    made = Snapshotting(lambda: _keep(made, PostgresStore.open(PostgresTarget.from_settings(url),
                                                               snapshot_every=EVERY)))
    return made


def _keep(made: Snapshotting, store: Any) -> Any:
    made.opened.append(store)
    return store


MAKERS = {"memory": _memory, "sqlite": _sqlite, "postgresql": _postgresql}


@pytest.fixture(params=[pytest.param(name, marks=[pytest.mark.postgres, pytest.mark.slow] if name == "postgresql"
                                     else []) for name in sorted(MAKERS)])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Snapshotting]:
    made = MAKERS[request.param](tmp_path, request)
    yield made
    for store in made.opened:
        store.close()


def status_state(store: JobStore, job: JobId) -> JobState:
    """What ``status`` folds (domain/services/jobs/status.py): the tail, or the whole record."""
    state = resumed(store.read_tail(job))
    return state if state is not None else fold(store.read(job))


def _same_as_the_whole_record(store: JobStore, job: JobId) -> None:
    last = store.read(job).events[-1].seq
    try:
        whole = fold(store.read(job))
    except JobsError as exc:
        with pytest.raises(type(exc)) as caught:
            status_state(store, job)
        assert str(caught.value) == str(exc)
        return
    tail = store.read_tail(job)
    assert [line.seq for line in tail.events] == list(range(tail.after + 1, last + 1))
    assert tail.after == last - last % EVERY  # a snapshot at every due event while the record reads
    assert tail.snapshot is not None or tail.after == 0
    assert status_state(store, job) == whole


def _append_all(store: JobStore, other: JobStore, job: JobId, story: list[tuple[ev.Event, bool]]) -> None:
    store.create(job, T0, *ev.encode(HEAD))
    for i, (event, by_other) in enumerate(story, start=1):
        (other if by_other else store).append(job, T0 + timedelta(seconds=i), *ev.encode(event))
        _same_as_the_whole_record(store, job)
        _same_as_the_whole_record(other, job)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(story=st.lists(st.tuples(st.sampled_from(EVENTS), st.booleans()), max_size=16))
def test_the_snapshot_and_the_lines_after_it_fold_to_the_whole_record(
        stores: Snapshotting, story: list[tuple[ev.Event, bool]]) -> None:
    store, other = stores.open(), stores.open()
    job = JobId(next(names))
    _append_all(store, other, job, [(ev.Submitting(1, Nonce("n1")), False), *story])
    before = [store.read_tail(j) for j in store.jobs()]
    store.rebuild_summaries()  # doctor: every snapshot made again from the events alone
    assert [store.read_tail(j) for j in store.jobs()] == before
    _same_as_the_whole_record(store, job)


def test_a_long_story_of_every_kind_resumes_at_each_snapshot(stores: Snapshotting) -> None:
    store, other = stores.open(), stores.open()
    job = JobId(next(names))
    steps: list[ev.Event]  # of every kind
    steps = [ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("o1")), ev.Confirmed(1, ObjectId("o1")),
             ev.Released(1, ObjectId("o1"), "/out", "/err"), ev.Requested("r1", "hold"),
             ev.Answered("r1", "confirmed", ""), ev.HeldByUser(1, ObjectId("o1")),
             *(ev.Observed(1, ObjectId("o1"), state, None, None, "") for state in ("running", "pending") * 4),
             ev.Absent(1), ev.Escalated("vanished", 1, "d"), ev.Delivered(0), ev.Requeueing(1, ObjectId("o1")),
             ev.Requeued(1, ObjectId("o1")), ev.ActionFailed("hold", 1, "started"), ev.Cancelling(1, ObjectId("o1")),
             ev.Submitting(2, Nonce("n2")), ev.Unknown(2, "u"), ev.Found(2, ObjectId("o2")),
             ev.Requested("r2", "resubmit"), ev.Answered("r2", "confirmed", ""), ev.Submitting(3, Nonce("n3")),
             ev.Refused(3, "r"), ev.MovedToResidual(2, "unknown"), ev.OutcomeReached("succeeded", ""), ev.Settled(),
             ev.Pruned()]
    _append_all(store, other, job, [(e, i % 4 == 3) for i, e in enumerate(steps)])
    state = status_state(store, job)
    assert state.settled and state.pruned_at is not None and len(state.attempts) == 3
    assert store.read_tail(job).after == (len(steps) + 1) // EVERY * EVERY


def test_a_phase_naming_jobs_several_times_keeps_each_ones_newest_snapshot(stores: Snapshotting) -> None:
    """One transaction of many events (a sweep's phase), some jobs crossing a snapshot, one of them more than
    once: the snapshot kept (one row per job, written once) is the newest due one."""
    store, other = stores.open(), stores.open()
    jobs = [JobId(next(names)) for _ in range(4)]
    for job in jobs:
        store.create(job, T0, *ev.encode(HEAD))
    observed: list[ev.Event] = [ev.Observed(1, ObjectId("o1"), state, None, None, "")
                                for state in ("running", "pending") * 4]
    batch: list[tuple[JobId, ev.Event]] = [
        (jobs[0], ev.Submitting(1, Nonce("n1"))), (jobs[1], ev.Submitting(1, Nonce("n1"))),
        *((jobs[0], event) for event in observed[:7]), (jobs[2], ev.Submitting(1, Nonce("n1")))]
    store.append_many([Append(job, T0 + timedelta(seconds=i), *ev.encode(event))
                       for i, (job, event) in enumerate(batch, start=1)])
    for job in jobs:
        _same_as_the_whole_record(store, job)
        _same_as_the_whole_record(other, job)
