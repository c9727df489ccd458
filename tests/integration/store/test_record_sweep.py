"""A sweep is recorded whole or not at all, on each SQL store: a failure (or a crash) while its elements are
being written leaves none of them, and a name taken meanwhile by another writer refuses the whole sweep."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.summary import SummaryQuery
from dunscaith.domain.model.jobs.sweeps import NameTaken, SweepPlan, element_specs, parse_array
from dunscaith.domain.services.jobs.submit import RecordJob, RecordSweep
from dunscaith.ports.job_store import JobStore
from tests.infra.postgres import PostgresTestServer
from tests.unit.jobs.helpers import NoCrash

OpenStore = Callable[[], JobStore]


class CrashAt:
    """A crash point that fails the n-th time ``point`` is reached (as kill -9 would stop the writer there)."""

    def __init__(self, point: str, nth: int) -> None:
        self._point, self._left = point, nth

    def reached(self, point: str) -> None:
        if point == self._point:
            self._left -= 1
            if self._left == 0:
                raise RuntimeError(f"crashed at {point}")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow])])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    opened: list[SqliteStore | PostgresStore] = []
    url = ""
    if request.param == "postgresql":
        server: PostgresTestServer = request.getfixturevalue("postgres_server")
        url = server.url(server.new_database())

    def _open() -> JobStore:
        store = (PostgresStore.open(PostgresTarget.from_settings(url)) if url
                 else SqliteStore.open(tmp_path / "records", SystemHost()))
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


def _elements(sweep: str, spec: str) -> list[JobSpec]:
    template = JobSpec(JobId(sweep), "local", "local", ("echo", "{}"))
    return list(element_specs(template, SweepPlan(JobId(sweep), parse_array(spec))))


def test_a_crash_between_two_elements_leaves_no_element_recorded(open_store: OpenStore) -> None:
    store = open_store()
    with pytest.raises(RuntimeError, match="crashed"):
        RecordSweep(store, FakeClock(), CrashAt("sweep-element-recorded", 3))(JobId("exp"), _elements("exp", "0-9"))
    again = open_store()  # what another process reads
    assert again.jobs() == [] and again.count(SummaryQuery(sweep="exp", include_pruned=True)) == 0
    assert RecordSweep(store, FakeClock(), NoCrash())(JobId("exp"), _elements("exp", "0-9"))[-1] == "exp-9"
    assert again.count(SummaryQuery(sweep="exp")) == 10


@pytest.mark.postgres
@pytest.mark.slow
def test_an_element_name_taken_after_the_check_refuses_the_whole_sweep(postgres_server: PostgresTestServer) -> None:
    # PostgreSQL only: SQLite's batch holds the write lock, so another writer waits for it instead
    url = postgres_server.url(postgres_server.new_database())
    store, other = (PostgresStore.open(PostgresTarget.from_settings(url)) for _ in range(2))

    class Racing(NoCrash):  # another writer records exp-5 while the sweep's elements are being written
        def reached(self, point: str) -> None:
            if point == "sweep-element-recorded" and JobId("exp-5") not in other.jobs():
                RecordJob(other, FakeClock(), NoCrash())(JobSpec(JobId("exp-5"), "local", "local", ("true",)))

    try:
        with pytest.raises(NameTaken, match="exp-5 was recorded by someone else meanwhile"):
            RecordSweep(store, FakeClock(), Racing())(JobId("exp"), _elements("exp", "0-9"))
        assert other.jobs() == [JobId("exp-5")]
    finally:
        store.close()
        other.close()
