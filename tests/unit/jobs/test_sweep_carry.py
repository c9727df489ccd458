"""A sweep's loop steps an element only when something concerning it changed (``Supervisor.carry``): its round's
answer, its record, a watched object of its, its lock, a signal, or one of its own deadlines. The failure paths
first: each is an element that must not be carried on, and is stepped exactly as before."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.attendance import loop_stale
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, CreateOutcome, ObjectSpec, ObjectState
from dunscaith.domain.model.jobs.record import JobRecord
from dunscaith.domain.model.jobs.state import AttemptState, JobState, fold
from dunscaith.domain.services.jobs.supervise import Ending
from dunscaith.ports.job_store import LockLost
from tests.unit.jobs.test_supervise_sweep import SWEEP, CountingRunning, StopAt, SweepRig, _record, _rig

POLL = 1.0  # the rig's supervise.poll; the attendance (and the sweep's beat of carried locks) every 10 s


class Store(InMemoryStore):
    """A watchable store (appends wake watches, as SQLite's and PostgreSQL's do) that counts each job's reads
    and lock beats, and can lose a job's lock (its session gone). With ``wake_all`` every append wakes every
    watch, as SQLite's one watch of its file does."""

    def __init__(self, *, wake_all: bool = False) -> None:
        super().__init__(watchable=True)
        self._wake_all = wake_all
        self.reads: Counter[str] = Counter()
        self.beats: Counter[str] = Counter()
        self.beat_times: dict[str, list[tuple[datetime, datetime | None]]] = {}
        self.lost: set[str] = set()
        self.seq_questions = 0

    def read(self, job: JobId) -> JobRecord:
        self.reads[job] += 1
        return super().read(job)

    def last_seqs(self, jobs: Any) -> dict[JobId, int]:
        self.seq_questions += 1
        return super().last_seqs(jobs)

    def append(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> int:
        seq = super().append(job, at, kind, data)
        if self._wake_all:
            with self._mutex:
                others = [w.wake for w in self._watches if w.job != job]
            for wake in others:
                wake()
        return seq

    @contextmanager
    def lock(self, job: JobId) -> Iterator[Any]:
        with super().lock(job) as held:
            yield _Lock(self, job, held)


class _Lock:
    """A held lock whose beats are counted, and which the store can take away (``Store.lost``)."""

    def __init__(self, store: Store, job: JobId, held: Any) -> None:
        self._store, self._job, self._held = store, job, held

    def check(self) -> None:
        if self._job in self._store.lost:
            raise LockLost(f"the lock of job {self._job} is gone")
        self._held.check()

    def beat(self, at: datetime, next_at: datetime | None = None) -> None:
        if self._job in self._store.lost:
            raise LockLost(f"the lock of job {self._job} is gone")
        self._store.beats[self._job] += 1
        self._store.beat_times.setdefault(self._job, []).append((at, next_at))
        self._held.beat(at, next_at)


class At(StopAt):
    """The sweep's waits on the fake clock, with ``actions`` done at their moments (monotonic seconds): a
    wait ends at the next action's moment, as a real one ends when a watch or a signal wakes it."""

    def __init__(self, clock: FakeClock, stop_at: float, actions: dict[float, Callable[[], None]]) -> None:
        super().__init__(clock, stop_at)
        self._actions = dict(sorted(actions.items()))
        self.waits = 0

    def wait(self, seconds: float) -> str | None:
        self.waits += 1
        end = self._clock.monotonic() + seconds
        upcoming = [at for at in self._actions if at <= end]
        if upcoming:
            self._clock.sleep(max(0.0, upcoming[0] - self._clock.monotonic()))
            self._actions.pop(upcoming[0])()
            self.flag = self.flag or self._clock.monotonic() >= self._at
            return self.pending()
        return super().wait(seconds)


def _running(count: int, *, wake_all: bool = False, scheduler: CountingRunning | None = None) -> tuple[SweepRig, Store]:
    clock = FakeClock()
    store = Store(wake_all=wake_all)
    r = _rig(store=store, clock=clock, scheduler=scheduler or CountingRunning(exit_code_of=lambda spec: None))
    _record(r, count)
    return r, store


def _object(r: SweepRig, job: str) -> ObjectId:
    oid = fold(r.store.read(JobId(job))).attempts[-1].object_id
    assert oid is not None
    return oid


def _times(r: SweepRig, job: str, kind: str) -> list[datetime]:
    return [line.at for line in r.store.read(JobId(job)).events if line.kind == kind]


def _state(r: SweepRig, job: str) -> JobState:
    return fold(r.store.read(JobId(job)))


# ---------------------------------------------------------------------- what makes an element step


def test_an_element_whose_answer_changes_is_stepped_in_the_round_that_shows_it() -> None:
    r, _store = _running(20)
    assert isinstance(r.scheduler, CountingRunning)
    start = r.clock.monotonic()
    ended_at: list[datetime] = []

    def finish() -> None:  # exp-7's object ends; nothing tells the sweep but the next query's answer
        r.scheduler.finish(_object(r, "exp-7"), exit_code=3)
        ended_at.append(r.clock.now())

    done = r.use_case(SWEEP, At(r.clock, start + 120.0, {start + 60.0: finish}), fresh=True)
    outcomes = {str(e.job): e.outcome for e in done.elements}
    assert outcomes["exp-7"] == "failed"
    assert all(outcomes[f"exp-{i}"] is None for i in range(1, 21) if i != 7)
    observed = _times(r, "exp-7", "observed")[-1]
    # seen at the first query after the end: the elements poll every 10 s by then, so within one interval
    assert timedelta(0) <= observed - ended_at[0] <= timedelta(seconds=10 * POLL)
    assert _times(r, "exp-7", "outcome")[0] == observed  # and judged in the same step


def test_an_element_whose_record_gets_a_request_answers_it_at_once_and_no_other_record_is_read() -> None:
    # Every append wakes every element's watch here (SQLite): one question to the store finds the record that
    # grew; only that one is read, and its request is answered and carried out in the pass the wake starts.
    r, store = _running(20, wake_all=True)
    start = r.clock.monotonic()
    asked_at: list[datetime] = []
    reads_before: list[Counter[str]] = []

    def command() -> None:
        kind, data = ev.encode(ev.Requested("r-1", "cancel"))
        reads_before.append(Counter(store.reads))
        store.append(JobId("exp-4"), r.clock.now(), kind, data)
        asked_at.append(r.clock.now())

    oid: list[ObjectId] = []

    def act() -> None:
        oid.append(_object(r, "exp-4"))
        command()

    done = r.use_case(SWEEP, At(r.clock, start + 90.0, {start + 60.0 + 0.3: act}), fresh=True)
    assert r.scheduler.count("cancel", oid[0]) == 1
    assert _times(r, "exp-4", "answer") == asked_at  # in the pass the wake started, not at its next poll
    assert _times(r, "exp-4", "cancelling") == asked_at
    assert {str(e.job): e.outcome for e in done.elements}["exp-4"] == "cancelled"
    read_since = Counter(store.reads)
    read_since.subtract(reads_before[0])
    assert +read_since == Counter({"exp-4": +read_since["exp-4"]}) and read_since["exp-4"] >= 1


def test_an_elements_own_commits_and_its_neighbours_wake_no_read_of_a_record_that_did_not_grow() -> None:
    r, store = _running(30, wake_all=True)
    start = r.clock.monotonic()
    done = r.use_case(SWEEP, At(r.clock, start + 60.0, {}), fresh=True)
    assert done.drained
    # each record read as its element is taken and in the first steps it takes anyway (made, released, seen
    # running: a step woken by a neighbour's commit reads), never once per commit: 30 elements commit some 5
    # events each, every one waking all 30, 150 wakes each, and no read for any of them once they are quiet
    assert max(store.reads.values()) <= 4, store.reads.most_common(3)
    assert store.seq_questions > 0


def test_an_elements_commits_in_the_middle_of_a_pass_step_no_element_carried_after_it() -> None:
    # Every commit wakes every element's watch here (SQLite). exp-7's object ends; the round that shows it
    # steps exp-7, whose commits wake all the others in the middle of the pass. Those carried after it in
    # that pass are carried still, and the next pass asks the store whether their records grew: none is read.
    r, store = _running(30, wake_all=True)
    start = r.clock.monotonic()
    assert isinstance(r.scheduler, CountingRunning)
    marks: list[Counter[str]] = []

    def finish() -> None:
        marks.append(Counter(store.reads))
        r.scheduler.finish(_object(r, "exp-7"), exit_code=0)

    done = r.use_case(SWEEP, At(r.clock, start + 200.0, {start + 100.0: finish,
                                                          start + 190.0: lambda: marks.append(Counter(store.reads))}),
                      fresh=True)
    assert {str(e.job): e.outcome for e in done.elements}["exp-7"] == "succeeded"
    read = marks[1]
    read.subtract(marks[0])
    assert +read == Counter({"exp-7": +read["exp-7"]}), +read


class LostReply(CountingRunning):
    """A create of ``name`` whose reply never comes, and which made nothing: the attempt is unknown, looked
    for by name and nonce at every query until supervise.absence (5 s here), then a new attempt is made."""

    def __init__(self, name: str) -> None:
        super().__init__(exit_code_of=lambda spec: None)
        self._name = name

    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        if spec.name == self._name and not self.count("create_held", spec.name):
            self._count("create_held", spec.name)
            return CreateAnswer(CreateOutcome.UNKNOWN, None, "timed out")
        return super().create_held(spec)


def test_an_element_whose_unknown_attempts_deadline_passes_among_quiet_ones_is_looked_for_then_tried_again() -> None:
    r, _store = _running(15, scheduler=LostReply("exp-3"))
    start = r.clock.monotonic()
    done = r.use_case(SWEEP, At(r.clock, start + 60.0, {}), fresh=True)
    assert done.drained
    state = _state(r, "exp-3")
    first, second = state.attempts
    assert first.order is AttemptState.UNKNOWN and second.order is AttemptState.RELEASED
    assert r.scheduler.count("create_held", "exp-3") == 2  # the lost one never sent again
    unknown_at = _times(r, "exp-3", "unknown")[0]
    absent_at = _times(r, "exp-3", "absent")[0]
    escalated_at = _times(r, "exp-3", "escalated")[0]
    # looked for at its first query, given up on at the first query past supervise.absence (5 s)
    assert absent_at - unknown_at <= timedelta(seconds=0.5)
    assert timedelta(seconds=5) < escalated_at - absent_at <= timedelta(seconds=5 + 4 * POLL)
    assert _times(r, "exp-3", "submitting")[-1] == escalated_at  # the new attempt at once


def test_a_signal_in_the_middle_of_a_pass_drains_every_element_once_and_sends_nothing_after_it() -> None:
    class SignalDuringQuery(CountingRunning):
        stop: StopAt | None = None
        queries_after_signal = 0

        def query(self, names: Any, *, confirm_absent: bool) -> Any:
            if self.stop is not None and self.stop.flag:
                self.queries_after_signal += 1
            answer = super().query(names, confirm_absent=confirm_absent)
            if self.stop is not None and self.calls["query"] == 12:
                self.stop.flag = True  # the signal lands while the round is being answered, mid-pass
            return answer

    scheduler = SignalDuringQuery(exit_code_of=lambda spec: None)
    r, store = _running(25, scheduler=scheduler)
    stop = At(r.clock, r.clock.monotonic() + 1_000.0, {})
    scheduler.stop = stop
    sent_before = Counter(kind for kind, _ in scheduler.log)
    done = r.use_case(SWEEP, stop, fresh=True)
    assert done.drained
    assert sorted(e.job for e in done.ends) == sorted(f"exp-{i}" for i in range(1, 26))  # each once
    assert all(e.end.ending is Ending.DRAINED for e in done.ends)
    sent = Counter(kind for kind, _ in scheduler.log)
    sent.subtract(sent_before)
    assert sent["create_held"] == 25 and scheduler.calls["release"] == 25  # nothing made twice
    assert scheduler.queries_after_signal <= 1  # only the one in flight; nothing asked for the drain
    assert not any(store.health(JobId(f"exp-{i}")).held for i in range(1, 26))  # every lock let go
    assert all(_state(r, f"exp-{i}").attempts[0].order is AttemptState.RELEASED for i in range(1, 26))


def test_a_lock_lost_under_a_carried_element_ends_it_at_the_sweeps_beat_having_sent_nothing_more() -> None:
    r, store = _running(10)
    start = r.clock.monotonic()
    lost_at: list[float] = []

    events_before: list[int] = []

    def lose() -> None:
        events_before.append(len(r.store.read(JobId("exp-2")).events))
        store.lost.add("exp-2")
        lost_at.append(r.clock.monotonic())

    done = r.use_case(SWEEP, At(r.clock, start + 60.0, {start + 25.0: lose}), fresh=True)
    ends = {str(e.job): e.end for e in done.ends}
    assert ends["exp-2"].ending is Ending.GAVE_UP and "lost the job's lock" in ends["exp-2"].detail
    assert len(r.store.read(JobId("exp-2")).events) == events_before[0]  # nothing written after
    assert r.scheduler.count("create_held", "exp-2") == 1
    assert all(ends[f"exp-{i}"].ending is Ending.DRAINED for i in range(1, 11) if i != 2)


# ---------------------------------------------------------------------- and what a quiet element costs


def test_quiet_elements_are_carried_on_their_locks_beaten_every_other_refresh_and_never_look_stale() -> None:
    r, store = _running(30)
    start = r.clock.monotonic()
    stale: list[str] = []

    def look() -> None:
        now = r.clock.now()
        stale.extend(f"exp-{i}" for i in range(1, 31) if loop_stale(store.health(JobId(f"exp-{i}")), now, POLL))

    looks = {start + t + 0.5: look for t in range(5, 300, 7)}
    window: list[datetime] = []
    looks[start + 20.0] = lambda: window.append(r.clock.now())
    looks[start + 60.0] = lambda: window.append(r.clock.now())
    queries: list[int] = []
    looks[start + 20.01] = lambda: queries.append(r.scheduler.calls["query"])
    looks[start + 60.01] = lambda: queries.append(r.scheduler.calls["query"])
    done = r.use_case(SWEEP, At(r.clock, start + 300.0, looks), fresh=True)
    assert done.drained and not stale
    assert r.scheduler.calls["query"] == done.queries  # one a round
    # From 20 s to 60 s the elements, released at once, poll every 4 then 8 s (their age's quarter): stepped,
    # each would beat at each of them. Carried on, each lock is beaten with the attendance, every 20 s.
    asked = queries[1] - queries[0]
    assert asked >= 6
    for job, times in store.beat_times.items():
        beats = [(at, next_at) for at, next_at in times if window[0] <= at < window[1]]
        assert 1 <= len(beats) <= 2, (job, beats)
        assert all(next_at is not None and next_at - at >= timedelta(seconds=20 * POLL - 0.01)
                   for at, next_at in beats), job


def test_an_element_whose_object_ended_while_it_was_carried_reaches_its_outcome_and_the_rest_carry_on() -> None:
    r, _store = _running(12)
    start = r.clock.monotonic()
    assert isinstance(r.scheduler, CountingRunning)

    def finish_all_odd() -> None:
        for i in range(1, 13, 2):
            r.scheduler.finish(_object(r, f"exp-{i}"), exit_code=0)

    done = r.use_case(SWEEP, At(r.clock, start + 200.0, {start + 100.0: finish_all_odd}), fresh=True)
    outcomes = {str(e.job): e.outcome for e in done.elements}
    assert all(outcomes[f"exp-{i}"] == ("succeeded" if i % 2 else None) for i in range(1, 13))
    assert all(_state(r, f"exp-{i}").attempts[0].object_state is ObjectState.RUNNING for i in range(2, 13, 2))


@given(st.integers(0, 10**5), st.lists(st.tuples(st.integers(0, 12), st.integers(0, 4_000_000)), min_size=1,
                                       max_size=30), st.integers(0, 3))
def test_the_next_query_is_timed_as_poll_delay_says_however_many_loops_ask_it(
        since_s: int, asks: list[tuple[int, int]], changes: int) -> None:
    """``Supervisor._next_query`` keeps the interval of the job's age between asks: the very time of
    ``next_poll(asked, poll_delay(quiet, age))`` for any run of asks, the job changing now and then."""
    from dataclasses import replace as changed

    from dunscaith.domain.model.jobs.polling import PollBackoff, next_poll, poll_delay
    from dunscaith.domain.services.jobs.supervise import Loop
    from tests.unit.jobs.helpers import rig

    r = rig(poll=10.0)
    job = r.record()
    state = fold(r.store.read(job))
    origin = state.recorded_at
    backoff = PollBackoff(base=timedelta(seconds=10), cap=timedelta(seconds=160))
    since = origin + timedelta(seconds=since_s)
    loop = Loop(state=changed(state, updated_at=since))
    asked = since
    for n, (quiet, step_ms) in enumerate(asks):
        asked += timedelta(milliseconds=step_ms)
        if changes and n % (changes + 3) == 0:
            since = asked - timedelta(milliseconds=step_ms // 2)
            loop.state = changed(loop.state, updated_at=since)
        loop.asked_at, loop.quiet = asked, quiet
        assert r.supervisor._next_query(loop) == next_poll(asked, poll_delay(quiet, asked - since, backoff))


class NoSeqs(Store):
    """A store whose ``last_seqs`` fails (a server that does not answer it): every woken element reads."""

    def last_seqs(self, jobs: Any) -> dict[JobId, int]:
        from dunscaith.ports.job_store import StoreError

        self.seq_questions += 1
        raise StoreError("the store does not answer")


def test_when_the_store_cannot_say_which_records_grew_every_woken_element_reads_its_record() -> None:
    clock = FakeClock()
    store = NoSeqs(wake_all=True)
    r = _rig(store=store, clock=clock, scheduler=CountingRunning(exit_code_of=lambda spec: None))
    _record(r, 10)
    start = clock.monotonic()
    asked_at: list[datetime] = []

    def command() -> None:
        kind, data = ev.encode(ev.Requested("r-1", "give-up"))
        store.append(JobId("exp-6"), clock.now(), kind, data)
        asked_at.append(clock.now())

    reads: list[Counter[str]] = []
    done = r.use_case(SWEEP, At(clock, start + 60.0, {start + 40.0: lambda: reads.append(Counter(store.reads)),
                                                     start + 40.2: command}), fresh=True)
    assert done.drained and store.seq_questions > 0
    assert _times(r, "exp-6", "answer") == asked_at  # answered at once all the same
    read_since = Counter(store.reads)
    read_since.subtract(reads[0])
    assert all(read_since[f"exp-{i}"] >= 1 for i in range(1, 11))  # each woken one read, not carried past it


def test_on_a_store_that_tells_of_no_appends_no_element_is_carried_and_each_reads_at_its_polls() -> None:
    # Without a watch the record is read every poll (requests come in that way): nothing may be carried.
    clock = FakeClock()
    store = InMemoryStore()  # not watchable
    r = _rig(store=store, clock=clock, scheduler=CountingRunning(exit_code_of=lambda spec: None))
    _record(r, 5)
    start = clock.monotonic()
    asked_at: list[datetime] = []

    def command() -> None:
        kind, data = ev.encode(ev.Requested("r-1", "give-up"))
        store.append(JobId("exp-2"), clock.now(), kind, data)
        asked_at.append(clock.now())

    done = r.use_case(SWEEP, At(clock, start + 60.0, {start + 40.2: command}), fresh=True)
    assert done.drained
    answered = _times(r, "exp-2", "answer")
    assert answered and timedelta(0) <= answered[0] - asked_at[0] <= timedelta(seconds=POLL)  # at its next read


def test_the_notices_of_wakes_hold_each_element_once_per_kind_however_many_commits_wake_it() -> None:
    """On SQLite each commit wakes every element's watch: while a 500-element sweep starts that is hundreds of
    thousands of wakes between two passes, and what the loop keeps of them stays one per element and kind."""
    from dunscaith.domain.services.jobs.supervise_sweep import _Notices

    notices = _Notices()
    for _commit in range(1_000):
        for i in range(1, 501):
            notices.tell(JobId(f"exp-{i}"), False)
    notices.tell(JobId("exp-7"), True)
    assert len(notices._told) == 501
    moved, appended = notices.take()
    assert moved == {JobId("exp-7")} and len(appended) == 500
    assert notices.take() == (set(), set())
    notices.tell(JobId("exp-7"), False)  # a wake after the take is told again
    assert notices.take() == (set(), {JobId("exp-7")})


def test_a_pending_element_carried_on_is_held_at_once_when_a_hold_is_asked() -> None:
    # Objects that stay pending (nothing starts them): every element is carried on, until exp-9's record gets
    # a hold request; it is answered and its object held in the pass the wake starts, and only it is.
    r, store = _running(12, scheduler=CountingRunning())
    start = r.clock.monotonic()
    asked_at: list[datetime] = []

    def command() -> None:
        kind, data = ev.encode(ev.Requested("r-1", "hold"))
        store.append(JobId("exp-9"), r.clock.now(), kind, data)
        asked_at.append(r.clock.now())

    done = r.use_case(SWEEP, At(r.clock, start + 120.0, {start + 70.5: command}), fresh=True)
    assert done.drained
    assert _times(r, "exp-9", "answer") == asked_at and _times(r, "exp-9", "held") == asked_at
    assert r.scheduler.calls["hold"] == 1
    assert _state(r, "exp-9").attempts[0].object_state is ObjectState.HELD
    assert all(_state(r, f"exp-{i}").attempts[0].object_state is ObjectState.PENDING for i in range(1, 13) if i != 9)
