"""The folded snapshot of a record: exact round trip, and never trusted when it is not this build's own.

A snapshot another build wrote, one made at another event than the store says, or one that does not
decode whole is refused (SnapshotUnusable), and ``resumed`` then says None: ``status`` folds the whole
record instead. So does a tail that does not follow the snapshot or does not fold; the whole record
then says why, at its own event, exactly as without snapshots.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.store.event_codec import decode_data, encode_data
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.record import EventLine, JobRecord, RecordTail, StoreIdentity
from dunscaith.domain.model.jobs.snapshot import SnapshotUnusable, decode, encode, resumed
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import JobState, RecordInconsistent, fold
from dunscaith.domain.model.jobs.summary import SummaryCarry, rebuild
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.model.version import VERSION
from dunscaith.domain.services.jobs.status import JobStatus
from dunscaith.ports.job_store import RecordDamaged

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
SPEC = JobSpec(JobId("j"), "big", "slurm", script="#!/bin/sh\ntrue\n", workdir="/w", max_attempts=3,
               options=("--partition=debug",), env=("A=1", "B=two"))
HEAD = ev.JobRecorded.of(SPEC, StoreIdentity("sqlite", "/r/db", None, 1, 2))
# a story that leaves every field of the state and of its attempts, requests and escalations set
STORY: list[ev.Event] = [
    ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("o1")), ev.Confirmed(1, ObjectId("o1")),
    ev.Released(1, ObjectId("o1"), "/out", "/err"), ev.Observed(1, ObjectId("o1"), "running", None, None, ""),
    ev.Requested("r1", "hold"), ev.Answered("r1", "confirmed", "ok"), ev.Requested("r2", "requeue"),
    ev.Answered("r2", "confirmed", ""), ev.Requeueing(1, ObjectId("o1")), ev.Absent(1),
    ev.Escalated("vanished", 1, "gone"), ev.Delivered(0), ev.Escalated("mismatch", None, "other"),
    ev.ActionFailed("hold", 1, "started"), ev.Cancelling(1, ObjectId("o1")),
    ev.Observed(1, ObjectId("o1"), "failed", 3, 9, "killed"), ev.Submitting(2, Nonce("n2")), ev.Unknown(2, "u"),
    ev.MovedToResidual(2, "unknown"), ev.Requested("r3", "resubmit"), ev.Answered("r3", "confirmed", ""),
    ev.Requested("r4", "cancel"), ev.OutcomeReached("failed", "exit 3"), ev.Settled(), ev.Pruned(),
]


def _record(events: list[ev.Event]) -> JobRecord:
    lines = [EventLine(seq, T0 + timedelta(seconds=seq), *ev.encode(e))
             for seq, e in enumerate([HEAD, *events], start=1)]
    return JobRecord(JobId("j"), tuple(lines))


def _kept(state: JobState, seq: int) -> dict[str, Any]:
    """The snapshot as a store hands it back: through its JSON text."""
    return decode_data(encode_data(encode(state, seq)))


def _tail(record: JobRecord, after: int, snap: dict[str, Any] | None) -> RecordTail:
    return RecordTail(record.job, snap, after, record.events[after:])


@pytest.mark.parametrize("at", range(1, len(STORY) + 2))
def test_a_snapshot_after_any_event_with_the_events_after_it_is_the_whole_fold(at: int) -> None:
    record = _record(STORY)
    whole = fold(record)
    state = fold(JobRecord(record.job, record.events[:at]))
    assert decode(_kept(state, at), at) == state
    assert resumed(_tail(record, at, _kept(state, at))) == whole


def test_every_field_of_the_state_is_set_by_the_story_and_survives() -> None:
    state = fold(_record(STORY))
    assert state.requests and state.escalations and state.failures and state.outcome and state.pruned_at
    assert state.requests[-1].result is None and state.escalations[0].delivered
    assert state.requeue_in_flight == 1 and state.resubmit_of == 2 and state.attempts[1].residual
    assert decode(_kept(state, 27), 27) == state


def test_an_elements_sweep_survives_its_snapshot() -> None:
    spec = JobSpec(JobId("exp-7"), "local", "local", ("true",), member=SweepMember(JobId("exp"), 7, 50))
    head = ev.JobRecorded.of(spec, StoreIdentity("sqlite", "/r/db", None, 1, 2))
    record = JobRecord(JobId("exp-7"), (EventLine(1, T0, *ev.encode(head)),))
    state = fold(record)
    assert decode(_kept(state, 1), 1) == state
    assert decode(_kept(state, 1), 1).spec.member == SweepMember(JobId("exp"), 7, 50)


def test_a_time_in_another_zone_is_kept_as_the_same_instant_in_utc() -> None:
    state = fold(_record(STORY[:3]))
    later = datetime(2026, 1, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    moved = JobState(**{**{f: getattr(state, f) for f in state.__slots__}, "updated_at": later})
    back = decode(_kept(moved, 4), 4)
    assert back.updated_at == later and back.updated_at is not None and back.updated_at.tzinfo is UTC


def _changed(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(data)
    target = changed
    for step in path[:-1]:
        target = target[step]
    if value is _GONE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return changed


_GONE = object()


@pytest.mark.parametrize(("path", "value"), [
    (("version",), "0.0.9"),  # another dunscaith
    (("version",), _GONE),
    (("format",), "job-state/0"),
    (("shape",), "0123456789abcdef"),  # a build whose state has other fields
    (("seq",), 7),  # made at another event than the store keeps it at
    (("seq",), "27"),
    (("attempts", 0, 2), "launched"),  # a state this build does not know
    (("attempts", 0), ["too", "short"]),
    (("requests", 0, 1), "hold-ish"),
    (("requests", 0, 2), "2026-01-01T12:00:00"),  # a time without a zone
    (("requests", 0, 2), "yesterday"),
    (("escalations", 0, 4), "yes"),
    (("outcome",), ["won", ""]),
    (("spec",), ["j", "big"]),
    (("spec", 6), 0),  # max_attempts the spec refuses
    (("flags",), [True]),
    (("flags", 0), 1),
    (("failures",), "one"),
    (("host",), None),
    (("recorded_at",), _GONE),
    (("attempts",), {"0": []}),
])
def test_a_snapshot_not_this_builds_or_not_whole_is_refused_and_status_folds_the_record(path: tuple[str, ...],
                                                                                        value: object) -> None:
    record = _record(STORY)
    good = _kept(fold(record), 27)
    bad = _changed(good, path, value)
    with pytest.raises(SnapshotUnusable):
        decode(bad, 27)
    assert resumed(_tail(record, 27, bad)) is None


def test_the_version_in_a_snapshot_is_the_projects() -> None:
    assert encode(fold(_record([])), 1)["version"] == VERSION


def test_a_tail_that_does_not_follow_its_snapshot_is_not_folded_onto_it() -> None:
    record = _record(STORY)
    snap = _kept(fold(JobRecord(record.job, record.events[:10])), 10)
    assert resumed(RecordTail(record.job, snap, 10, record.events[11:])) is None  # event 11 missing


def test_a_tail_that_does_not_fold_sends_status_to_the_whole_record() -> None:
    record = _record([*STORY[:5], ev.Created(7, ObjectId("o7"))])
    snap = _kept(fold(JobRecord(record.job, record.events[:4])), 4)
    assert resumed(_tail(record, 4, snap)) is None
    with pytest.raises(RecordInconsistent, match="attempt 7, which was never started"):
        fold(record)


def test_without_a_snapshot_the_tail_is_the_record_and_is_refused_as_the_fold_refuses_it() -> None:
    record = _record([ev.Created(1, ObjectId("o"))])
    with pytest.raises(RecordInconsistent) as whole:
        fold(record)
    with pytest.raises(RecordInconsistent) as tail:
        resumed(_tail(record, 0, None))
    assert str(tail.value) == str(whole.value)


def test_due_every_so_many_events() -> None:
    assert [seq for seq in range(1, 100) if snapshot.due(seq)] == [32, 64, 96]
    assert snapshot.due(6, 3) and not snapshot.due(7, 3)


# --- through the use case: what status shows --------------------------------------------------------

Snapshot_change = Callable[[dict[str, Any]], dict[str, Any]]  # a kept snapshot, altered


class _Tampered(InMemoryStore):
    """A store whose kept snapshot was written by another build (or damaged, or is of another event)."""

    def __init__(self, change: Snapshot_change) -> None:
        super().__init__(snapshot_every=4)
        self.change = change
        self.whole_reads = 0

    def read_tail(self, job: JobId) -> RecordTail:
        tail = super().read_tail(job)
        return RecordTail(tail.job, self.change(dict(tail.snapshot or {})), tail.after, tail.events)

    def read(self, job: JobId) -> JobRecord:
        self.whole_reads += 1
        return super().read(job)


def _status(store: InMemoryStore, story: list[ev.Event]) -> Any:
    store.create(JobId("j"), T0, *ev.encode(HEAD))
    for i, event in enumerate(story, start=1):
        store.append(JobId("j"), T0 + timedelta(seconds=i), *ev.encode(event))
    return JobStatus(store, FakeClock(T0), poll=30.0).one(JobId("j"))


@pytest.mark.parametrize("change", [
    lambda s: {**s, "version": "9.9.9"}, lambda s: {**s, "attempts": "?"}, lambda s: {**s, "seq": s["seq"] - 4},
], ids=["another-version", "does-not-decode", "another-event"])
def test_status_of_a_record_whose_snapshot_does_not_serve_is_its_whole_fold(change: Snapshot_change) -> None:
    store = _Tampered(change)
    view = _status(store, STORY)
    assert store.whole_reads == 1
    assert view.state == fold(InMemoryStore.read(store, JobId("j")))


def test_status_of_a_record_with_a_snapshot_reads_only_its_tail() -> None:
    store = _Tampered(lambda s: s)
    view = _status(store, STORY)
    assert store.whole_reads == 0 and store.read_tail(JobId("j")).after == 24
    assert view.state == fold(InMemoryStore.read(store, JobId("j"))) and view.label == "failed"


def test_status_of_a_record_whose_tail_does_not_fold_says_what_the_whole_record_says() -> None:
    store = _Tampered(lambda s: s)
    with pytest.raises(RecordInconsistent, match="a second outcome"):
        _status(store, [*STORY[:-2], ev.OutcomeReached("succeeded", "")])
    assert store.whole_reads == 1


def test_a_damaged_line_after_the_snapshot_is_reported_at_its_own_seq() -> None:
    class Damaged(_Tampered):
        def read_tail(self, job: JobId) -> RecordTail:
            raise RecordDamaged(job, "not JSON", 26)

    with pytest.raises(RecordDamaged) as caught:
        _status(Damaged(lambda s: s), STORY)
    assert caught.value.event == 26


@pytest.mark.parametrize("every", [1, 2, 3, 5, 1024])
@pytest.mark.parametrize("story", [STORY, [*STORY[:7], ev.Created(9, ObjectId("o9")), *STORY[7:]]],
                         ids=["reads", "stops-reading"])
def test_rebuilding_from_the_events_is_carrying_them_one_by_one(every: int, story: list[ev.Event]) -> None:
    record = _record(story)
    first, *rest = record.events
    carried = SummaryCarry(record.job, first.at, first.kind, first.data, every)
    for line in rest:
        carried.step(line.at, line.kind, line.data)
    rebuilt = rebuild(record.job, record.events, every)
    assert rebuilt.summary() == carried.summary() and rebuilt.snapshot == carried.snapshot
    assert rebuilt.seq == carried.seq == len(record.events)


def test_a_snapshot_that_cannot_be_made_never_fails_the_append_or_a_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot only saves folding: a bug in making one must not stop a record from being written."""
    def broken(state: JobState, seq: int) -> dict[str, Any]:
        raise AttributeError("a field the snapshot does not know")

    monkeypatch.setattr(snapshot, "encode", broken)
    store = InMemoryStore(snapshot_every=4)
    view = _status(store, STORY)  # every append went in, snapshots due at 4, 8, ... made none
    assert view.state == fold(store.read(JobId("j")))
    assert len(store.read(JobId("j")).events) == len(STORY) + 1
    assert rebuild(JobId("j"), _record(STORY).events, every=4).summary().job == JobId("j")
