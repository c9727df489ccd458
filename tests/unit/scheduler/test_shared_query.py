"""The shared query: every supervisor on a host shares one scheduler query per interval."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import threading
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.adapters.scheduler.shared_query import ANSWER, WANTED, SharedQueryScheduler
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.objects import ObjectSpec, ObjectState, OutputPaths, QueryResult
from dunscaith.ports.clock import Clock
from dunscaith.ports.scheduler import Scheduler
from tests.expect import present


def make(inner: Scheduler, tmp_path: Path, clock: Clock, n: int) -> list[SharedQueryScheduler]:
    return [SharedQueryScheduler(inner, tmp_path / "cache", clock, max_age=4.0) for _ in range(n)]


def submit(inner: Scheduler, names: Iterable[str]) -> None:
    for name in names:
        inner.create_held(ObjectSpec(JobId(name), Nonce(f"n-{name}"), command=("true",)))


def test_after_one_round_of_registration_each_interval_costs_one_query(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    names = [f"job-{i}" for i in range(100)]
    submit(inner, names)
    sups = make(inner, tmp_path, clock, 100)
    for sup, name in zip(sups, names, strict=True):  # first round: each registers as it first asks
        sup.query([JobId(name)], confirm_absent=True)
    for _ in range(3):
        clock.advance(seconds=5)
        before = inner.calls["query"]
        for sup, name in zip(sups, names, strict=True):
            [view] = sup.query([JobId(name)], confirm_absent=True).objects
            assert view.name == name and view.state is ObjectState.HELD
        assert inner.calls["query"] - before == 1


def test_concurrent_supervisors_share_one_query(tmp_path: Path) -> None:
    inner = FakeScheduler()
    names = [f"job-{i}" for i in range(20)]
    submit(inner, names)
    sups = make(inner, tmp_path, SystemClock(), 20)
    for sup, name in zip(sups, names, strict=True):
        sup._register(frozenset([name]))
    barrier = threading.Barrier(20)
    results: dict[str, QueryResult] = {}

    def poll(sup: SharedQueryScheduler, name: str) -> None:
        barrier.wait()
        results[name] = sup.query([JobId(name)], confirm_absent=True)

    threads = [threading.Thread(target=poll, args=(s, n)) for s, n in zip(sups, names, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inner.calls["query"] == 1
    assert all(r.complete and [v.name for v in r.objects] == [n] for n, r in results.items())


def test_a_stale_answer_is_asked_again(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    sup, other = make(inner, tmp_path, clock, 2)
    other._register(frozenset(["a"]))  # a live supervisor to publish for (alone, nothing is published)
    sup.query([JobId("a")], confirm_absent=True)
    other.query([JobId("a")], confirm_absent=True)
    assert inner.calls["query"] == 1
    clock.advance(seconds=4.5)
    other.query([JobId("a")], confirm_absent=True)
    assert inner.calls["query"] == 2


def test_each_answer_carries_when_it_was_asked_and_no_caller_gets_one_twice(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    sup, other = make(inner, tmp_path, clock, 2)
    other._register(frozenset(["a"]))  # a live supervisor to publish for (alone, nothing is published)
    first = sup.query([JobId("a")], confirm_absent=True)
    assert first.asked_at == clock.now()
    clock.advance(seconds=0.25)
    again = sup.query([JobId("a")], confirm_absent=True)  # a short poll: a newer answer, not the same one
    assert inner.calls["query"] == 2 and again.asked_at == clock.now()
    assert other.query([JobId("a")], confirm_absent=True).asked_at == again.asked_at  # the other shares it
    assert inner.calls["query"] == 2


def test_an_answer_asked_before_the_callers_last_action_is_never_used(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    sup, other = make(inner, tmp_path, clock, 2)
    submit(inner, ["a"])
    [view] = other.query([JobId("a")], confirm_absent=True).objects  # asked before sup's release
    clock.advance(seconds=0.1)
    sup.release(view.object_id)
    clock.advance(seconds=0.1)
    seen = sup.query([JobId("a")], confirm_absent=True)
    assert inner.calls["query"] == 2 and seen.asked_at is not None and seen.asked_at > view_time(clock, 0.2)
    assert [v.state for v in seen.objects] == [ObjectState.PENDING]


def view_time(clock: Clock, ago: float) -> datetime:
    from datetime import timedelta
    return clock.now() - timedelta(seconds=ago)


def test_a_failed_query_is_shared_not_repeated_by_everyone(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    a, b = make(inner, tmp_path, clock, 2)
    a._register(frozenset(["a"]))
    b._register(frozenset(["b"]))
    inner.fail_next_query("squeue: Socket timed out")
    assert not a.query([JobId("a")], confirm_absent=True).complete
    result = b.query([JobId("b")], confirm_absent=True)
    assert not result.complete and "Socket timed out" in result.detail
    assert inner.calls["query"] == 1


def test_a_registration_of_a_dead_process_is_dropped(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    [sup] = make(inner, tmp_path, clock, 1)
    sup.query([JobId("a")], confirm_absent=True)
    dead = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True).stdout.strip()
    (tmp_path / "cache" / WANTED / "dead").write_text(json.dumps({"version": 1, "pid": int(dead), "names": ["zz"]}))
    clock.advance(seconds=10)
    sup.query([JobId("a")], confirm_absent=True)
    assert inner.log[-1] == ("query", ("a",))
    assert not (tmp_path / "cache" / WANTED / "dead").exists()


def test_a_closed_supervisor_is_no_longer_asked_for(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    a, b = make(inner, tmp_path, clock, 2)
    a.query([JobId("a")], confirm_absent=True)
    b.query([JobId("b")], confirm_absent=True)
    b.close()
    clock.advance(seconds=10)
    a.query([JobId("a")], confirm_absent=True)
    assert inner.log[-1] == ("query", ("a",))


def test_a_damaged_answer_is_asked_again_and_replaced_whole(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    sup, other = make(inner, tmp_path, clock, 2)
    other._register(frozenset(["b"]))  # someone to publish for
    sup.query([JobId("a")], confirm_absent=True)
    (tmp_path / "cache" / ANSWER).write_text('{"version": 1, "asked_at"')
    assert sup.query([JobId("a")], confirm_absent=True).complete
    assert inner.calls["query"] == 2
    json.loads((tmp_path / "cache" / ANSWER).read_text())


def test_what_a_power_loss_leaves_of_the_unsynced_cache_reads_as_absent(tmp_path: Path) -> None:
    # The cache files are renamed into place without fsync: after a power loss a name may hold nothing,
    # NUL bytes or a torn start. Each reads as absent: one more query, never a wrong answer.
    inner, clock = FakeScheduler(), FakeClock()
    submit(inner, ["a"])
    a, b = make(inner, tmp_path, clock, 2)
    a.query([JobId("a")], confirm_absent=True)
    b.query([JobId("a")], confirm_absent=True)
    for torn in [b"", b"\0" * 300, b'{"asked_at":1,"complete":true,"detail":"","names":["a"],"obj']:
        clock.advance(seconds=5)
        a.query([JobId("a")], confirm_absent=True)
        asked = inner.calls["query"]
        (tmp_path / "cache" / ANSWER).write_bytes(torn)
        (tmp_path / "cache" / WANTED / "torn").write_bytes(torn)
        [view] = b.query([JobId("a")], confirm_absent=True).objects
        assert view.state is ObjectState.HELD
        assert inner.calls["query"] == asked + 1
        assert inner.log[-1] == ("query", ("a",))
        json.loads((tmp_path / "cache" / ANSWER).read_text())


def test_the_cache_is_private(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    sup, other = make(inner, tmp_path, clock, 2)
    other._register(frozenset(["b"]))
    sup.query([JobId("a")], confirm_absent=True)
    assert stat.S_IMODE(os.stat(tmp_path / "cache").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / "cache" / ANSWER).st_mode) == 0o600


def test_everything_but_query_goes_straight_to_the_scheduler(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    [sup] = make(inner, tmp_path, clock, 1)
    answer = present(sup.create_held(ObjectSpec(JobId("a"), Nonce("n"), command=("true",))).object_id)
    other = present(sup.create_held(ObjectSpec(JobId("a"), Nonce("m"), command=("true",))).object_id)
    sup.release(answer)
    sup.cancel(answer)
    assert sup.cancel_if_not_started([other]) == [other]
    assert sup.stop_by_name(JobId("a")) == []
    inner.set_output_paths(answer, OutputPaths("/o", None))
    assert sup.output_paths(answer) == OutputPaths("/o", None)
    assert sup.user == inner.user
    assert (inner.calls["create_held"], inner.calls["release"], inner.calls["cancel"]) == (2, 1, 1)
    assert (inner.calls["cancel_if_not_started"], inner.calls["stop_by_name"], inner.calls["output_paths"]) == (1, 1, 1)


def test_a_query_that_does_not_confirm_absence_is_asked_directly_and_never_registered(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    poller, sweeper = make(inner, tmp_path, clock, 2)
    poller.query([JobId("polled")], confirm_absent=True)
    residual = [JobId(f"residual-{i}") for i in range(1000)]

    for _ in range(2):  # a sweep's query is its own, whatever the shared answer's age
        assert sweeper.query(residual, confirm_absent=False).complete
    clock.advance(seconds=10)
    poller.query([JobId("polled")], confirm_absent=True)

    assert inner.log[-3:] == [("query", tuple(residual)), ("query", tuple(residual)), ("query", ("polled",))]
    assert os.listdir(tmp_path / "cache" / WANTED) == [poller._token]


def test_after_its_own_action_an_instance_asks_afresh(tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    sup, other = make(inner, tmp_path, clock, 2)
    other._register(frozenset(["a"]))  # a live supervisor to publish for (alone, nothing is published)
    object_id = present(sup.create_held(ObjectSpec(JobId("a"), Nonce("n"), command=("true",))).object_id)
    [held] = sup.query([JobId("a")], confirm_absent=True).objects
    assert held.state is ObjectState.HELD

    sup.release(object_id)  # within max_age of the last answer, which predates the release
    [released] = sup.query([JobId("a")], confirm_absent=True).objects
    assert released.state is ObjectState.PENDING
    assert inner.calls["query"] == 2
    other.query([JobId("a")], confirm_absent=True)  # the fresh answer is shared again
    assert inner.calls["query"] == 2


def test_an_answer_is_published_only_for_another_live_supervisor_and_one_who_comes_shares_it_at_once(
        tmp_path: Path) -> None:
    inner, clock = FakeScheduler(), FakeClock()
    submit(inner, ["a", "b"])
    alone, comer = make(inner, tmp_path, clock, 2)
    alone.query([JobId("a")], confirm_absent=True)
    clock.advance(seconds=5)
    alone.query([JobId("a")], confirm_absent=True)
    assert not (tmp_path / "cache" / ANSWER).exists()  # nobody to read it: not written
    assert inner.calls["query"] == 2
    clock.advance(seconds=1)
    [view] = comer.query([JobId("b")], confirm_absent=True).objects  # it asks for both, and publishes
    assert view.name == "b" and inner.log[-1] == ("query", ("a", "b"))
    [mine] = alone.query([JobId("a")], confirm_absent=True).objects  # shared: no query of its own
    assert mine.name == "a" and inner.calls["query"] == 3
    clock.advance(seconds=5)
    alone.query([JobId("a")], confirm_absent=True)  # the comer is registered: this one publishes now
    comer.query([JobId("b")], confirm_absent=True)
    assert inner.calls["query"] == 4
