"""A supervisor whose store tells of appends sleeps to its job's next poll, and a request wakes it.

On SQLite (the default store) a commit by any writer wakes the loop (adapters/store/sqlite/append_watch.py),
so a healthy loop no longer reads its record every supervise.poll: it sleeps to the next query, the
next supervised-at refresh, or the next escalation retry, and says in the lock when it will loop next.
On PostgreSQL the server's notice (LISTEN/NOTIFY) does the same; without a watch, or while it is lost
(its connection), the loop reads the record every poll interval, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.attendance import loop_stale
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import LoopHealth
from dunscaith.domain.model.jobs.state import fold
from tests.unit.jobs.helpers import StopAfter, rig

POLL = 10.0


class Watching(StopAfter):
    """Records each pause; ``on_wait`` runs before the pause (a command appending meanwhile), and a wake
    ends the pause with the clock where it was."""

    def __init__(self, clock: FakeClock, waits: int, store: InMemoryStore, job: JobId, on_wait=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(clock, waits)
        self.store, self.job, self.on_wait = store, job, on_wait
        self.pauses: list[tuple[float, float, LoopHealth]] = []  # (at, seconds, health at the pause's start)
        self.woken = 0
        self.woke_during: list[int] = []

    def wake(self) -> None:
        self.woken += 1

    def wait(self, seconds: float) -> str | None:
        self.pauses.append((self._clock.monotonic(), seconds, self.store.health(self.job)))
        before = self.woken
        if self.on_wait is not None:
            self.on_wait(len(self.pauses))
        if self.woken > before:  # woken while it would sleep: the pause ends at once
            self.woke_during.append(len(self.pauses))
            return super().wait(0.0)
        return super().wait(seconds)


def _running(watchable: bool, waits: int, on_wait=None):  # type: ignore[no-untyped-def]
    store = InMemoryStore(watchable=watchable)
    r = rig(exit_code=None, poll=POLL, giveup=10_000.0, store=store)
    job = r.record()
    cancel = Watching(r.clock, waits, store, job, on_wait)
    r.run(job, cancel)
    return r, job, cancel


def test_without_a_watch_the_loop_reads_its_record_every_poll_interval() -> None:
    _, _, cancel = _running(watchable=False, waits=120)
    assert all(seconds <= POLL for _, seconds, _ in cancel.pauses)


def test_with_a_watch_a_settled_in_job_is_slept_on_to_its_next_query_and_the_lock_says_so() -> None:
    _, _, cancel = _running(watchable=True, waits=120)
    long = [(at, seconds, health) for at, seconds, health in cancel.pauses if seconds > POLL]
    assert long, "a job hours old should be slept on for longer than supervise.poll"
    for _, seconds, health in long:
        # the beat written just before the pause announces its end: status calls the loop healthy up to
        # then and for two poll intervals after
        assert health.held and health.next_loop is not None and health.last_loop is not None
        assert abs((health.next_loop - health.last_loop).total_seconds() - seconds) < 0.01
        assert not loop_stale(health, health.next_loop + timedelta(seconds=2 * POLL), POLL)
        assert loop_stale(health, health.next_loop + timedelta(seconds=2 * POLL + 1), POLL)
    # no pause runs past the next supervised-at refresh (ten poll intervals)
    assert max(seconds for _, seconds, _ in cancel.pauses) <= 10 * POLL


def test_supervised_at_is_reported_every_ten_poll_intervals_of_time_however_long_the_loop_sleeps() -> None:
    r, _, _ = _running(watchable=True, waits=120)
    from itertools import pairwise

    gaps = [(b - a).total_seconds() for a, b in pairwise(r.progress.alive)]
    assert len(gaps) >= 5 and all(10 * POLL <= gap <= 10 * POLL + 0.001 for gap in gaps)


def test_a_request_committed_while_the_loop_sleeps_wakes_it_and_is_answered_at_once() -> None:
    store = InMemoryStore(watchable=True)
    r = rig(exit_code=None, poll=POLL, giveup=10_000.0, store=store)
    job = r.record()

    def command(n: int) -> None:
        if n == 60:  # by then the job has settled in: the pause ahead is long
            kind, data = ev.encode(ev.Requested("r-1", "give-up"))
            store.append(job, r.clock.now(), kind, data)

    cancel = Watching(r.clock, 80, store, job, command)
    r.run(job, cancel)
    assert cancel.woke_during and cancel.woke_during[0] == 60
    assert cancel.pauses[59][1] > POLL  # it would have slept long
    state = fold(store.read(job))
    answered = [q for q in state.requests if q.id == "r-1"]
    assert answered and answered[0].result == "confirmed"
    # answered in the loop the wake started, with the clock where the request was made
    lines = store.read(job).events
    answer_at = next(line.at for line in lines if line.kind == ev.Answered.KIND)
    request_at = next(line.at for line in lines if line.kind == ev.Requested.KIND)
    assert answer_at == request_at


def test_status_calls_a_loop_stale_two_poll_intervals_after_the_next_loop_it_announced() -> None:
    from datetime import UTC, datetime

    t = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    announced = LoopHealth(True, t, t + timedelta(seconds=160))
    assert not loop_stale(announced, t + timedelta(seconds=179), POLL)
    assert loop_stale(announced, t + timedelta(seconds=181), POLL)
    silent = LoopHealth(True, t)  # an older supervisor, or a store that keeps only the last loop
    assert not loop_stale(silent, t + timedelta(seconds=29), POLL)
    assert loop_stale(silent, t + timedelta(seconds=31), POLL)
    earlier = LoopHealth(True, t, t - timedelta(seconds=5))  # an announcement before the loop is ignored
    assert loop_stale(earlier, t + timedelta(seconds=31), POLL)
    assert not loop_stale(LoopHealth(False, None), t, POLL)


class _Flaky:
    """A watch whose connection the test loses and gets back (PostgreSQL's LISTEN), waking on each change."""

    def __init__(self, wake) -> None:  # type: ignore[no-untyped-def]
        self.wake, self.up = wake, True

    def live(self) -> bool:
        return self.up

    def set(self, up: bool) -> None:
        self.up = up
        self.wake()

    def close(self) -> None:
        pass

    def release(self) -> None:
        pass


def test_while_the_watch_is_lost_the_loop_reads_every_poll_interval_and_the_live_view_says_so_both_ways() -> None:
    store = InMemoryStore(watchable=True)
    r = rig(exit_code=None, poll=POLL, giveup=10_000.0, store=store)
    job = r.record()
    watches: list[_Flaky] = []

    def watch_appends(watched: JobId, wake: Callable[[], None]) -> _Flaky:
        watches.append(_Flaky(wake))
        return watches[-1]

    setattr(store, "watch_appends", watch_appends)  # noqa: B010 - the rig's store, its watch made flaky

    def connection(n: int) -> None:
        if n == 60:
            watches[0].set(False)
        elif n == 90:
            watches[0].set(True)

    cancel = Watching(r.clock, 120, store, job, connection)
    r.run(job, cancel)
    assert cancel.pauses[59][1] > POLL  # asleep to its next query while the watch was live
    lost = cancel.pauses[60:90]
    assert lost and all(seconds <= POLL for _, seconds, _ in lost)  # the fallback: every supervise.poll
    assert any(seconds > POLL for _, seconds, _ in cancel.pauses[91:])  # asleep again once it is back
    assert len(r.progress.notes) == 2
    assert "lost" in r.progress.notes[0] and "supervise.poll (10 s)" in r.progress.notes[0]
    assert "back" in r.progress.notes[1]
