"""WatchJob: a record followed as it grows, read-only, to the ending its supervisor would have.

A record made by the real supervisor on fakes is replayed into a store one line at a time, the way the
supervisor commits it, while the watcher waits between looks."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import EventLine, JobRecord
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.domain.services.jobs.watch import WatchEnding, WatchJob
from dunscaith.ports.job_store import StoreError
from tests.unit.jobs.helpers import NoCrash, rig


@dataclass
class View:
    events: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    entered: int = 0
    left: int = 0

    def committed(self, state: JobState, event: ev.Event) -> None:
        self.events.append(event.KIND)

    def supervised(self, state: JobState, at: datetime) -> None:
        raise AssertionError("a watcher never reports a loop of its own")

    def note(self, text: str) -> None:
        self.lines.append(text)

    def show(self, state: JobState) -> None:
        pass

    def line(self, text: str) -> None:
        self.lines.append(text)

    def __enter__(self) -> View:
        self.entered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.left += 1


class Script:
    """The ``Interrupts`` a watcher waits on: each wait carries out the next step (what another process
    does meanwhile); once the script is done, a Ctrl-C."""

    def __init__(self, steps: list[Callable[[], None]]) -> None:
        self.steps = list(steps)
        self.waits = 0

    def pending(self) -> str | None:
        return None

    def wake(self) -> None:
        pass

    def wait(self, seconds: float) -> str | None:
        self.waits += 1
        if not self.steps:
            return "SIGINT"
        self.steps.pop(0)()
        return None


def _supervised_record() -> list[EventLine]:
    """A whole record, as the supervisor commits it for a job that succeeds."""
    r = rig(0)
    job = r.record("w")
    r.run(job)
    return list(r.store.read(job).events)


def _store_with(lines: list[EventLine], upto: int) -> InMemoryStore:
    store = InMemoryStore(watchable=True)
    store.create(JobId("w"), lines[0].at, lines[0].kind, lines[0].data)
    for line in lines[1:upto]:
        store.append(JobId("w"), line.at, line.kind, line.data)
    return store


def _appends(store: InMemoryStore, lines: list[EventLine]) -> list[Callable[[], None]]:
    return [lambda line=line: store.append(JobId("w"), line.at, line.kind, line.data)  # type: ignore[misc]
            for line in lines]


def _watch(store: InMemoryStore, script: Script) -> tuple[WatchEnding, View, JobState]:
    view = View()
    end = WatchJob(store, lambda **_: view, interval=1.0)(JobId("w"), script)
    return end.ending, view, end.state


def test_each_line_the_supervisor_commits_is_shown_in_order_and_the_watch_ends_settled() -> None:
    lines = _supervised_record()
    store = _store_with(lines, 3)
    with ExitStack() as held:
        held.enter_context(store.lock(JobId("w")))  # the supervisor holds the job: the watcher needs no lock
        release = held.pop_all().close
        ending, view, state = _watch(store, Script([*_appends(store, lines[3:]), release]))
    assert ending is WatchEnding.SETTLED and state.settled
    assert view.events == [line.kind for line in lines]  # every line once, in order
    assert view.entered == view.left == 1
    assert [line.kind for line in store.read(JobId("w")).events] == [line.kind for line in lines]  # wrote nothing


def test_an_outcome_whose_supervisor_lets_go_with_work_left_ends_outstanding_as_its_exit_5() -> None:
    lines = [line for line in _supervised_record() if line.kind != "settled"]
    store = _store_with(lines, 3)
    with ExitStack() as held:
        held.enter_context(store.lock(JobId("w")))
        release = held.pop_all().close
        ending, view, state = _watch(store, Script([*_appends(store, lines[3:]), release]))
    assert ending is WatchEnding.OUTSTANDING and state.outcome is not None and not state.settled
    assert "its supervisor ended" in view.lines[-1]


def test_an_unattended_job_with_no_outcome_is_said_once_and_ends_the_watch_at_the_next_look() -> None:
    # Nobody writes the record of a job no supervisor holds: following it waited for ever, even once its
    # scheduler had ended it long before (issue 38). The watch ends, Unattended, at its first look.
    store = _store_with(_supervised_record(), 3)
    script = Script([lambda: None, lambda: None])
    view = View()
    end = WatchJob(store, lambda **_: view, interval=1.0)(JobId("w"), script)
    assert end.ending is WatchEnding.UNATTENDED and end.state.outcome is None
    assert script.waits == 1  # one look, not a wait for someone to come
    assert sum("no supervisor holds this job (Unattended" in line for line in view.lines) == 1


def test_a_supervisor_that_takes_the_job_before_the_next_look_is_followed_to_its_outcome() -> None:
    lines = _supervised_record()
    store = _store_with(lines, 3)
    held = ExitStack()

    def reattach() -> None:
        held.enter_context(store.lock(JobId("w")))

    steps = [reattach, *_appends(store, lines[3:]), held.close]
    ending, view, _ = _watch(store, Script(steps))
    assert ending is WatchEnding.SETTLED
    assert sum("no supervisor holds this job (Unattended" in line for line in view.lines) == 1
    assert "a supervisor holds this job now" in view.lines


def test_a_supervisor_that_ends_with_no_outcome_ends_the_watch_unattended() -> None:
    lines = _supervised_record()
    store = _store_with(lines, 3)
    held = ExitStack()
    held.enter_context(store.lock(JobId("w")))
    ending, view, state = _watch(store, Script([lambda: None, held.close]))
    assert ending is WatchEnding.UNATTENDED and state.outcome is None
    assert any("its supervisor ended" in line for line in view.lines)


def test_an_element_waiting_for_a_slot_of_its_live_sweep_supervisor_is_followed_not_ended_unattended() -> None:
    clock = FakeClock()
    store = InMemoryStore(watchable=True)
    spec = JobSpec(JobId("exp-3"), "local", "fake", ("echo", "3"), member=SweepMember(JobId("exp"), 3, 1))
    element = RecordJob(store, clock, NoCrash())(spec)
    view = View()
    with store.lock(JobId("exp")):  # the sweep's supervisor: it starts exp-3 when a slot frees
        end = WatchJob(store, lambda **_: view, interval=1.0)(element, Script([lambda: None, lambda: None]))
    assert end.ending is WatchEnding.STOPPED  # followed until the Ctrl-C, never called Unattended
    assert not any("Unattended" in line for line in view.lines)


def test_a_settled_job_ends_the_watch_at_once_and_a_signal_ends_it_stopped() -> None:
    lines = _supervised_record()
    script = Script([])
    ending, view, _ = _watch(_store_with(lines, len(lines)), script)
    assert ending is WatchEnding.SETTLED and script.waits == 0 and view.events[-1] == "settled"
    ending, _, _ = _watch(_store_with(lines, 3), Script([]))
    assert ending is WatchEnding.STOPPED


def test_a_store_that_does_not_answer_while_followed_is_said_once_and_read_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _supervised_record()
    store = _store_with(lines, 3)
    failing = [0]
    real_read = store.read

    def read(job: JobId) -> JobRecord:
        if failing[0]:
            failing[0] -= 1
            raise StoreError("server gone")
        return real_read(job)

    monkeypatch.setattr(store, "read", read)

    def fail_twice() -> None:
        failing[0] = 2

    with store.lock(JobId("w")):  # its supervisor carries on meanwhile
        ending, view, _ = _watch(store, Script([fail_twice, *_appends(store, lines[3:])]))
    assert ending is WatchEnding.SETTLED
    assert view.events == [line.kind for line in lines]  # nothing lost while the store did not answer
    assert sum("does not read now (server gone)" in line for line in view.lines) == 1
    assert "the record reads again" in view.lines
