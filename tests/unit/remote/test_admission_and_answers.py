"""admit_request, the state of a directory and the answer a terminate call reports."""

from __future__ import annotations

from typing import Any

import pytest

from dunscaith.domain.model.remote.control import MAX_SECONDS, Admitted, Refusal, admit_request, decode_files, encode
from dunscaith.domain.model.remote.state import Answer, State, answer_to, state_of
from tests.unit.remote.records import FOREIGN_REQ, INST, REQ, failed_start, full_run


def test_a_matching_request_is_admitted() -> None:
    assert admit_request(encode(REQ), INST) == Admitted(REQ)


@pytest.mark.parametrize("field", ["nonce", "host", "wrapper_pid", "worker_pid"])
def test_a_request_naming_another_instance_is_refused_with_the_field(field: str) -> None:
    other: dict[str, Any] = {field: {"nonce": "f" * 32, "host": "node2", "wrapper_pid": 1, "worker_pid": 2}[field]}
    request = REQ._replace(instance=INST.id._replace(**other))
    verdict = admit_request(encode(request), INST)
    assert isinstance(verdict, Refusal)
    assert verdict.request == request
    assert field in verdict.reason


@pytest.mark.parametrize("text", [b"", b"kill it", b'{"format":"dunscaith.remote.terminate/1"}', b"[]"])
def test_an_unreadable_request_is_refused_without_a_request(text: bytes) -> None:
    verdict = admit_request(text, INST)
    assert isinstance(verdict, Refusal)
    assert verdict.request is None
    assert verdict.reason.startswith("unreadable request")


def test_states() -> None:
    files = full_run()
    assert state_of(decode_files({}), live=False) is State.EMPTY
    assert state_of(decode_files({k: files[k] for k in ["launching.json"]}), live=True) is State.LAUNCHING
    running = {k: files[k] for k in ["launching.json", "instance.json"]}
    assert state_of(decode_files(running), live=True) is State.RUNNING
    assert state_of(decode_files(running), live=False) is State.LOST
    terminating = {k: v for k, v in files.items() if k not in ("outcome.json", "killed.json")}
    assert state_of(decode_files(terminating), live=True) is State.TERMINATING
    assert state_of(decode_files(files), live=True) is State.ENDED
    assert state_of(decode_files(failed_start()), live=False) is State.FAILED


def test_the_answer_is_the_one_to_this_request_only() -> None:
    records = decode_files(full_run())
    assert answer_to(REQ, records, refused_before=set()) is Answer.CONFIRMED
    assert answer_to(REQ._replace(grace_seconds=1.0), records, refused_before=set()) is None
    assert answer_to(FOREIGN_REQ, records, refused_before=set()) is Answer.REFUSED
    # a refusal seen before this call wrote its request is an older answer, not this call's
    assert answer_to(FOREIGN_REQ, records, refused_before={1}) is None


def test_exit_codes_are_distinct() -> None:
    assert [a.exit_code for a in Answer] == [0, 4, 5, 6]


@pytest.mark.parametrize("grace", [MAX_SECONDS + 1, 1e300])
def test_a_request_with_a_grace_past_the_longest_is_refused_not_admitted(grace: float) -> None:
    """Issue 38: a grace of 1e300 was admitted, and the wrapper ended on it (time_t overflow), its worker
    unrecorded. Such a request is refused (the wrapper goes on) and a reader refuses the file by name."""
    verdict = admit_request(encode(REQ._replace(grace_seconds=grace)), INST)
    assert isinstance(verdict, Refusal) and verdict.request is None
    assert "grace_seconds must be a number from 0 to 2592000" in verdict.reason
    assert admit_request(encode(REQ._replace(grace_seconds=float(MAX_SECONDS))), INST) == \
        Admitted(REQ._replace(grace_seconds=float(MAX_SECONDS)))
