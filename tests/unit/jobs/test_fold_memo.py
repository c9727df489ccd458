"""The fold decodes a mapping a store shared between lines once (issue 15): same state, same refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import MappingProxyType

import pytest

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.record import EventLine, JobRecord, StoreIdentity
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import decoded, fold

T0 = datetime(2026, 1, 1, tzinfo=UTC)
OID = ObjectId("4242")
HEAD: list[ev.Event] = [ev.JobRecorded.of(JobSpec(JobId("j"), "local", "local", ("true",)), StoreIdentity("m", "j")),
                        ev.Submitting(1, Nonce("n1")), ev.Created(1, OID), ev.Confirmed(1, OID), ev.Released(1, OID)]
RUNNING = MappingProxyType(ev.encode(ev.Observed(1, OID, "running", None, None, ""))[1])


def _record(lines: list[tuple[str, object]]) -> JobRecord:
    head = [ev.encode(e) for e in HEAD]
    return JobRecord(JobId("j"), tuple(EventLine(seq, T0 + timedelta(seconds=seq), kind, data)  # type: ignore[arg-type]
                                       for seq, (kind, data) in enumerate([*head, *lines], start=1)))


def test_lines_sharing_one_mapping_fold_as_lines_each_with_its_own() -> None:
    shared = _record([("observed", RUNNING)] * 50)
    own = _record([("observed", dict(RUNNING)) for _ in range(50)])
    assert fold(shared) == fold(own)
    events = [e for _, e in decoded(shared)][len(HEAD):]
    assert all(e is events[0] for e in events) and events[0] == ev.Observed(1, OID, "running", None, None, "")
    assert [at for at, _ in decoded(shared)] == [line.at for line in shared.events]


def test_one_mapping_under_another_kind_is_decoded_as_that_kind() -> None:
    record = _record([("observed", RUNNING), ("no-such-kind", RUNNING)])
    with pytest.raises(ev.EventUndecodable, match="unknown event kind 'no-such-kind'"):
        fold(record)


def test_a_line_with_wrong_fields_among_identical_ones_is_still_refused() -> None:
    wrong = {**RUNNING, "attempt": "one"}
    record = _record([("observed", RUNNING)] * 5 + [("observed", wrong)] + [("observed", RUNNING)] * 5)
    with pytest.raises(ev.EventUndecodable, match="attempt"):
        fold(record)
    read: list[tuple[datetime, ev.Event]] = []
    with pytest.raises(ev.EventUndecodable):
        read.extend(decoded(record))
    assert len(read) == len(HEAD) + 5  # refused at its own line, every line before it decoded
