"""TerminateInstance against scripted directory readings: what it writes and what it answers."""

from __future__ import annotations

import math
import re

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.domain.model.remote.control import MAX_SECONDS, InstanceRecords, TerminateRequest
from dunscaith.domain.model.remote.errors import BadTerminateArguments
from dunscaith.domain.model.remote.state import Answer
from dunscaith.domain.services.remote.instances import TerminateInstance
from tests.unit.remote.records import FAIL, FOREIGN_REQ, INST, LAUNCH, OUT, REFUSAL, REQ, TERM

RUNNING = InstanceRecords(launching=LAUNCH, instance=INST)


class ScriptedFiles:
    """Each read returns the next reading (the last one repeats); publishes are recorded, not applied."""

    location = "/scripted"

    def __init__(self, *readings: tuple[bool, InstanceRecords], accept: bool = True) -> None:
        self.readings = list(readings)
        self.published: list[TerminateRequest] = []
        self.accept = accept

    def read(self) -> tuple[bool, InstanceRecords]:
        return self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]

    def publish_request(self, request: TerminateRequest) -> bool:
        self.published.append(request)
        return self.accept


def _terminate(files: ScriptedFiles, grace: float = 5.0, wait: float = 2.0, nonce: str | None = None) -> Answer:
    return TerminateInstance(files, FakeClock())(grace, wait, nonce)


def test_a_live_instance_without_request_gets_one_and_its_confirmation() -> None:
    files = ScriptedFiles((True, RUNNING), (True, RUNNING),
                          (True, RUNNING._replace(request=REQ, terminated=TERM)))
    assert _terminate(files) is Answer.CONFIRMED
    assert files.published == [REQ]


def test_no_live_wrapper_writes_nothing() -> None:
    files = ScriptedFiles((False, RUNNING))
    assert _terminate(files) is Answer.UNREQUESTED
    assert files.published == []


def test_a_start_failure_or_an_outcome_leaves_nothing_to_terminate() -> None:
    for records in (RUNNING._replace(failure=FAIL), RUNNING._replace(outcome=OUT)):
        files = ScriptedFiles((True, records))
        assert _terminate(files) is Answer.UNREQUESTED
        assert files.published == []


def test_another_admitted_request_is_not_this_calls_answer() -> None:
    other = REQ._replace(grace_seconds=1.0)
    files = ScriptedFiles((True, RUNNING._replace(request=other, terminated=TERM._replace(request=other))))
    assert _terminate(files) is Answer.UNREQUESTED
    assert files.published == []


def test_a_repeat_waits_for_the_answer_to_the_request_in_place() -> None:
    files = ScriptedFiles((True, RUNNING._replace(request=REQ)), (True, RUNNING._replace(request=REQ)),
                          (True, RUNNING._replace(request=REQ, terminated=TERM)))
    assert _terminate(files) is Answer.CONFIRMED
    assert files.published == []


def test_no_answer_before_the_wait_ends_is_unanswered() -> None:
    files = ScriptedFiles((True, RUNNING), (True, RUNNING._replace(request=REQ)))
    assert _terminate(files, wait=0.5) is Answer.UNANSWERED
    assert files.published == [REQ]


def test_a_request_for_another_instance_is_answered_by_its_refusal() -> None:
    files = ScriptedFiles((True, RUNNING), (True, RUNNING), (True, RUNNING._replace(refused=(REFUSAL,))))
    assert _terminate(files, nonce=FOREIGN_REQ.instance.nonce) is Answer.REFUSED
    assert files.published == [FOREIGN_REQ]


def test_a_foreign_request_awaiting_refusal_is_waited_out_then_ours_is_written() -> None:
    files = ScriptedFiles((True, RUNNING._replace(request=FOREIGN_REQ)), (True, RUNNING._replace(refused=(REFUSAL,))),
                          (True, RUNNING._replace(refused=(REFUSAL,), request=REQ, terminated=TERM)))
    assert _terminate(files) is Answer.CONFIRMED
    assert files.published == [REQ]


def test_right_after_run_started_it_waits_for_the_instance() -> None:
    launching = InstanceRecords(launching=LAUNCH)
    files = ScriptedFiles((True, launching), (True, launching), (True, RUNNING), (True, RUNNING),
                          (True, RUNNING._replace(request=REQ, terminated=TERM)))
    assert _terminate(files) is Answer.CONFIRMED


def test_a_worker_whose_outcome_waits_for_space_has_nothing_left_to_terminate() -> None:
    from datetime import UTC, datetime

    from dunscaith.domain.model.remote.control import Blocked

    waiting = RUNNING._replace(blocked=Blocked("outcome.json", 28, "No space left on device",
                                               datetime(2026, 12, 1, tzinfo=UTC), exit_code=0))
    files = ScriptedFiles((True, waiting))
    assert _terminate(files) is Answer.UNREQUESTED
    assert files.published == []


class UnreadFiles(ScriptedFiles):
    """A directory that must not be looked at: the arguments are refused first (issue 38)."""

    def read(self) -> tuple[bool, InstanceRecords]:
        raise AssertionError("the instance was read before the arguments were checked")


@pytest.mark.parametrize(("grace", "wait", "nonce", "named"), [
    (math.inf, 2.0, None, "--grace inf"), (5.0, math.inf, None, "--wait inf"), (math.nan, 2.0, None, "--grace nan"),
    (MAX_SECONDS + 1, 2.0, None, "--grace"), (5.0, 1e300, None, "--wait"), (-1.0, 2.0, None, "--grace -1"),
    (5.0, 2.0, "", "--nonce"), (5.0, 2.0, " ", "--nonce"), (5.0, 2.0, "ab\ncd", "--nonce"),
])
def test_arguments_out_of_range_are_refused_before_the_instance_is_read(
        grace: float, wait: float, nonce: str | None, named: str) -> None:
    files = UnreadFiles((True, RUNNING))
    with pytest.raises(BadTerminateArguments, match=re.escape(named)):
        _terminate(files, grace, wait, nonce)
    assert files.published == []


def test_the_longest_grace_and_wait_are_taken() -> None:
    files = ScriptedFiles((True, RUNNING), (True, RUNNING),
                          (True, RUNNING._replace(request=REQ._replace(grace_seconds=MAX_SECONDS),
                                                  terminated=TERM._replace(
                                                      request=REQ._replace(grace_seconds=MAX_SECONDS)))))
    assert _terminate(files, MAX_SECONDS, MAX_SECONDS) is Answer.CONFIRMED
    assert files.published == [REQ._replace(grace_seconds=float(MAX_SECONDS))]
