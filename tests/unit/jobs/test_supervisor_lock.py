"""The supervisor proves its lock before every request that changes the scheduler, and stops once it is lost.

A shared store's lock can vanish under a live holder (its server session ends); the holder must then
send nothing more, since another supervisor may already be acting on the job.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

import pytest

from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import QueryResult
from dunscaith.domain.model.jobs.state import Action, AttemptState
from dunscaith.domain.services.jobs.commands import Answer, JobCommands
from dunscaith.domain.services.jobs.passes import supervise_one
from dunscaith.domain.services.jobs.supervise import Ending, SupervisionEnd
from dunscaith.ports.job_store import JobLock, LockLost
from tests.expect import present
from tests.unit.jobs.helpers import Rig, StopAfter, rig


class LosingLock:
    """A real lock whose ``check`` fails from its ``lose_at``-th call on, as a server session that ended."""

    def __init__(self, inner: JobLock, lose_at: int, log: list[str]) -> None:
        self._inner = inner
        self._lose_at = lose_at
        self.checks = 0
        self._log = log

    def check(self) -> None:
        self.checks += 1
        self._log.append("check")
        if self.checks >= self._lose_at:
            raise LockLost("the lock of job j1 is lost: its session to the server ended")
        self._inner.check()

    def beat(self, at: datetime, next_at: datetime | None = None) -> None:
        self._inner.beat(at)


def _spy(r: Rig, log: list[str]) -> None:
    for method in ("create_held", "release", "cancel", "hold", "requeue"):
        real = getattr(r.scheduler, method)

        def spying(*args: Any, _real: Callable[..., Any] = real, _name: str = method) -> Any:
            log.append(_name)
            return _real(*args)

        setattr(r.scheduler, method, spying)


def _run(r: Rig, job: JobId, lose_at: int, log: list[str]) -> SupervisionEnd:
    with r.store.lock(job) as lock:
        return supervise_one(r.supervisor, job, LosingLock(lock, lose_at, log), StopAfter(r.clock))


def test_a_lock_lost_before_the_create_sends_nothing_and_leaves_submitting_for_the_next_holder() -> None:
    r = rig(exit_code=0)
    log: list[str] = []
    _spy(r, log)
    job = r.record()
    end = _run(r, job, lose_at=1, log=log)
    assert end.ending is Ending.GAVE_UP and "lost the job's lock" in end.detail and "session" in end.detail
    assert r.scheduler.count("create_held") == 0
    assert r.kinds(job) == ["job-recorded", "submitting"]  # durable before the check: found unanswered later
    # the next supervisor, holding a sound lock, records the unanswered attempt unknown and never resends it
    again = r.run(job)
    assert r.scheduler.count("create_held") == 1
    first, *later = present(again.state).attempts
    assert first.order is not AttemptState.SUBMITTING and first.object_id is None
    assert len(later) == 1 and later[0].nonce != first.nonce


def test_a_lock_lost_after_the_create_never_releases_and_commits_nothing_more() -> None:
    r = rig(exit_code=0)
    log: list[str] = []
    _spy(r, log)
    job = r.record()
    end = _run(r, job, lose_at=2, log=log)
    assert end.ending is Ending.GAVE_UP
    assert log == ["check", "create_held", "check"]
    (oid,) = r.scheduler.objects()
    assert r.scheduler.released_times(oid) == 0
    assert "released" not in r.kinds(job)


def test_every_request_that_changes_the_scheduler_follows_a_check() -> None:
    r = rig(exit_code=0)
    log: list[str] = []
    _spy(r, log)
    job = r.record()
    end = _run(r, job, lose_at=10**6, log=log)
    assert end.ending is Ending.OUTCOME
    assert log == ["check", "create_held", "check", "release"]


def test_a_command_whose_lock_is_lost_sends_nothing_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    r = rig(exit_code=None)
    job = r.record()
    r.run(job, StopAfter(r.clock, waits=2))  # created and released, running: a hold is a scheduler request
    log: list[str] = []
    _spy(r, log)
    real_lock = r.store.lock

    @contextlib.contextmanager
    def losing(name: JobId) -> Iterator[JobLock]:
        with real_lock(name) as held:
            yield LosingLock(held, 1, log)

    monkeypatch.setattr(r.store, "lock", losing)
    commands = JobCommands(r.store, r.clock, r.crash, lambda: r.supervisor, wait=5.0)
    result = commands(job, Action.CANCEL, StopAfter(r.clock))
    assert "cancel" not in log
    assert "lost" in result.problem
    assert result.answer in (Answer.CONFIRMED, Answer.NOT_ANSWERED)


class UnreachableScheduler:
    """The fake, with every query failing from ``after`` on: the login node's network is gone."""

    def __init__(self, inner: FakeScheduler, after: int) -> None:
        self._inner = inner
        self._left = after

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        self._left -= 1
        if self._left < 0:
            raise OSError("Connection timed out")
        return self._inner.query(names, confirm_absent=confirm_absent)


def test_a_supervisor_cut_off_from_scheduler_and_store_learns_of_its_lost_lock_before_giveup() -> None:
    """No answer means no beat; the loop then asks its lock itself, so a lost session ends it within the
    lock's own detection time, not at supervise.giveup, and nothing is sent after."""
    r = rig(exit_code=None, poll=1.0, giveup=600.0)
    log: list[str] = []
    _spy(r, log)
    job = r.record()
    r.supervisor.means.scheduler = UnreachableScheduler(r.scheduler, after=3)
    started = r.clock.monotonic()
    end = _run(r, job, lose_at=4, log=log)  # checks 1-2 before create and release, 3 the first silent loop
    assert end.ending is Ending.GAVE_UP and "lost the job's lock" in end.detail
    assert r.clock.monotonic() - started < 60  # a few polls, far from giveup (600 s)
    assert log == ["check", "create_held", "check", "release", "check", "check"]
