"""The real Supervisor on a real PostgreSQL store: a server restart mid-supervision, and the takeover after it.

The scheduler is the runnable fake (the objects are not what is tested here); the store, its lock and
the server's restart are real.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.objects import ObjectState, QueryResult
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import OutcomeKind
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.domain.services.jobs.supervise import Ending, SuperviseSettings, Supervisor
from tests.expect import present
from tests.infra.postgres import private_server
from tests.unit.jobs.helpers import NoCrash, Progress, StopAfter

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

JOB = JobId("restarted-1")


def _supervisor(store: PostgresStore, scheduler: FakeScheduler, clock: FakeClock, nonces) -> Supervisor:  # type: ignore[no-untyped-def]
    return Supervisor(store, scheduler, clock, NoCrash(), Progress(),
                      SuperviseSettings(poll=1.0, giveup=30.0, wait=10.0, drain=2.0),
                      Policy(absence_deadline=timedelta(seconds=5)), nonces=nonces,
                      residual=InMemoryResidualList())


def test_a_server_restart_mid_supervision_stops_the_holder_and_a_new_supervisor_carries_on_once() -> None:
    with private_server() as server:
        url = server.url(server.new_database())
        clock = FakeClock()
        scheduler = FakeScheduler()  # objects stay pending until finished by hand
        counter = iter(range(1, 100))

        def nonces() -> Nonce:
            return Nonce(f"n{next(counter)}")

        first = PostgresStore.open(PostgresTarget.from_settings(url))
        RecordJob(first, clock, NoCrash())(JobSpec(JOB, "local", "local", ("true",)))
        real_query = scheduler.query
        queries = {"n": 0}

        def query(names: Sequence[JobId], **options: bool) -> QueryResult:
            queries["n"] += 1
            if queries["n"] == 3:  # created, released, observed pending twice: now the server restarts
                server.restart()
            return real_query(names, **options)

        scheduler.query = query  # type: ignore[method-assign]
        try:
            with first.lock(JOB) as lock:
                end = supervise_one(_supervisor(first, scheduler, clock, nonces), JOB, lock, StopAfter(clock))
        finally:
            first.close()
        assert end.ending is Ending.GAVE_UP
        assert "lost the job's lock" in end.detail and "session to the server ended" in end.detail
        (oid,) = scheduler.objects()
        assert scheduler.released_times(oid) == 1 and scheduler.count("create_held") == 1

        scheduler.query = real_query  # type: ignore[method-assign]
        scheduler.set_state(oid, ObjectState.RUNNING)
        scheduler.finish(oid, 0)
        with PostgresStore.open(PostgresTarget.from_settings(url)) as second, second.lock(JOB) as lock:
            again = supervise_one(_supervisor(second, scheduler, clock, nonces), JOB, lock, StopAfter(clock))
            kinds = [line.kind for line in second.read(JOB).events]
        assert again.ending is Ending.OUTCOME and present(present(again.state).outcome).kind is OutcomeKind.SUCCEEDED
        assert scheduler.count("create_held") == 1 and scheduler.released_times(oid) == 1
        assert kinds.count("submitting") == 1 and kinds.count("released") == 1 and kinds.count("created") == 1
        assert kinds[-2:] == ["outcome", "settled"]
