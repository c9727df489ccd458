"""The jobs domain's errors share one root, JobsError, and keep the bases callers caught before."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.pointer import DamagedPointer, NoPointer
from dunscaith.domain.model.jobs.prune import BadDuration, parse_duration
from dunscaith.domain.model.jobs.record import StoreIdentity
from dunscaith.domain.model.jobs.root_errors import RootUnsafe
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.domain.model.jobs.state import RecordInconsistent, fold_events
from dunscaith.domain.model.remote.control import ControlError
from dunscaith.domain.model.remote.errors import RemoteError
from dunscaith.domain.model.strict_json import DecodeError

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HEAD = ev.JobRecorded.of(JobSpec(JobId("j"), "local", "local", ("true",)), StoreIdentity("memory", "m"))


@pytest.mark.parametrize("error", [
    RecordInconsistent("x"), BadSpec("x"), BadDuration("x"), NoPointer("j"), DamagedPointer("j", "x"),
    RootUnsafe("/r", "x"), ev.EventUndecodable("x"),
])
def test_every_jobs_error_is_a_jobs_error(error: Exception) -> None:
    assert isinstance(error, JobsError)


def test_the_parse_errors_are_still_value_errors_and_an_undecodable_event_still_a_decode_error() -> None:
    assert issubclass(RecordInconsistent, ValueError) and issubclass(BadSpec, ValueError)
    assert issubclass(BadDuration, ValueError) and issubclass(ev.EventUndecodable, DecodeError)


def test_an_unknown_kind_or_field_is_a_jobs_error() -> None:
    with pytest.raises(ev.EventUndecodable, match="unknown event kind"):
        ev.decode("launched", {})
    with pytest.raises(ev.EventUndecodable, match="missing field"):
        ev.decode("created", {"attempt": 1})


def test_a_value_this_build_does_not_know_is_an_inconsistent_record_not_a_bare_value_error() -> None:
    submitting = ev.Submitting(1, Nonce("n"))
    created = ev.Created(1, ObjectId("o"))
    observed = ev.Observed(1, ObjectId("o"), "melted", None, None, "")
    with pytest.raises(RecordInconsistent, match="'melted' is no ObjectState"):
        fold_events([(T0, HEAD), (T0, submitting), (T0, created), (T0, observed)])
    with pytest.raises(RecordInconsistent, match="'won' is no OutcomeKind"):
        fold_events([(T0, HEAD), (T0, ev.OutcomeReached("won", ""))])


def test_a_bad_duration_is_a_jobs_error() -> None:
    with pytest.raises(JobsError):
        parse_duration("soon")


def test_a_damaged_control_file_is_a_remote_error_and_still_a_decode_error() -> None:
    assert issubclass(ControlError, RemoteError) and issubclass(ControlError, DecodeError)
