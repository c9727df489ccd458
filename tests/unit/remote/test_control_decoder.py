"""The one decoder: every refusal the seed lists, in one table, and what it accepts."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest

from dunscaith.domain.model.remote.control import (
    FAILURE,
    INSTANCE,
    KILLED,
    LAUNCHING,
    OUTCOME,
    REQUEST,
    TERMINATED,
    ControlError,
    InstanceRecords,
    Refused,
    Signalled,
    decode_files,
    encode,
    refused_name,
)
from tests.unit.remote.records import (
    FOREIGN_REQ,
    INST,
    LAUNCH,
    OUT,
    REFUSAL,
    REQ,
    T0,
    TERM,
    failed_start,
    full_run,
)


def _edit(name: str, **changes: Any) -> Any:
    def mutate(files: dict[str, bytes]) -> None:
        obj = json.loads(files[name])
        for key, value in changes.items():
            if value is _DROP:
                del obj[key]
            else:
                obj[key] = value
        files[name] = json.dumps(obj).encode()

    return mutate


def _put(name: str, data: bytes) -> Any:
    def mutate(files: dict[str, bytes]) -> None:
        files[name] = data

    return mutate


def _drop(*names: str) -> Any:
    def mutate(files: dict[str, bytes]) -> None:
        for name in names:
            del files[name]

    return mutate


_DROP = object()
OTHER_ID = {**INST.id.to_json(), "worker_pid": 999}

REFUSALS = [
    # another format, a missing or an extra field
    ("another format", full_run, _edit(OUTCOME, format="dunscaith.remote.outcome/0"), "format"),
    ("a record of another kind under the name", full_run, _put(KILLED, encode(TERM)), "format"),
    ("not JSON at all", full_run, _put(INSTANCE, b"{half"), "not JSON"),
    ("a missing field", full_run, _edit(INSTANCE, process_group=_DROP), "missing field(s) process_group"),
    ("an extra field", full_run, _edit(LAUNCHING, user="ana"), "unexpected field(s) user"),
    ("a missing field inside the identity", full_run,
     _edit(OUTCOME, instance={k: v for k, v in INST.id.to_json().items() if k != "host"}), "missing field(s) host"),
    ("a field of the wrong type", full_run, _edit(OUTCOME, stdout_bytes="3"), "wrong type"),
    ("a bool for a pid", full_run, _edit(INSTANCE, worker_pid=True), "wrong type"),
    ("a time without zone", full_run, _edit(INSTANCE, at="2026-11-30T04:00:00"), "time zone"),
    ("an unknown file", full_run, _put("notes.json", b"{}"), "not a control file"),
    # a file that names another launch or instance
    ("an instance of another launch", full_run, _edit(INSTANCE, nonce="e" * 32), "another launch"),
    ("a failure of another launch", failed_start, _edit(FAILURE, wrapper_pid=7), "another launch"),
    ("a file without its launch", full_run, _drop(LAUNCHING), "no launching.json"),
    ("an outcome naming another instance", full_run, _edit(OUTCOME, instance=OTHER_ID), "another instance"),
    ("a confirmation naming another instance", full_run, _edit(TERMINATED, instance=OTHER_ID), "another instance"),
    # an outcome without its instance
    ("an outcome without its instance", full_run,
     _drop(INSTANCE, TERMINATED, KILLED, REQUEST, refused_name(1)), "outcome.json: no instance.json"),
    # a launch failure together with an outcome
    ("a failure with an outcome", failed_start, _put(OUTCOME, encode(OUT)), "together with a launch failure"),
    # a kill without its termination
    ("a kill without its termination", full_run, _drop(TERMINATED), "a kill without its termination"),
    ("a kill for another request", full_run,
     _put(KILLED, encode(Signalled(INST.id, REQ._replace(grace_seconds=1.0), "KILL", 101, T0))),
     "a kill without its termination"),
    # a confirmation without its accepted request
    ("a confirmation without a request", full_run, _drop(REQUEST), "confirms a request that is not"),
    ("a confirmation of another request", full_run, _put(REQUEST, encode(REQ._replace(grace_seconds=9.0))),
     "confirms a request that is not"),
    ("a confirmation of a request this instance refuses", full_run,
     _put(REQUEST, encode(FOREIGN_REQ)),
     "confirms a request that is not"),
    # a refusal that names another instance
    ("a refusal naming another instance", full_run,
     _put(refused_name(1), encode(REFUSAL._replace(instance=INST.id._replace(wrapper_pid=5)))), "another instance"),
    # a refusal of a request that would be accepted
    ("a refusal of an acceptable request", full_run,
     _put(refused_name(2), encode(Refused(INST.id, 2, REQ, "no reason", T0))), "would accept"),
    ("a refusal under another number", full_run,
     _put(refused_name(3), encode(REFUSAL._replace(number=4))), "carries number 4"),
    # values no wrapper writes
    ("an outcome with both exit and signal", full_run, _edit(OUTCOME, exit_code=0), "exactly one"),
    ("a digest that is no digest", full_run, _edit(OUTCOME, stdout_digest="abc"), "stdout_digest is not a digest"),
    ("a digest of an unknown algorithm", full_run, _edit(OUTCOME, stdout_digest="md5:" + "0" * 64),
     "stdout_digest is not a digest"),
    ("an outcome/1 with a digest that is no sha256", full_run,
     _edit(OUTCOME, format="dunscaith.remote.outcome/1", stdout_digest=_DROP, stdout_sha256="abc"),
     "stdout_sha256 is not a sha256 digest"),
    ("an outcome of an unknown format", full_run, _edit(OUTCOME, format="dunscaith.remote.outcome/3"),
     "expected 'dunscaith.remote.outcome/2'"),
    ("a worker not leading its group", full_run, _edit(INSTANCE, process_group=1), "process group"),
    ("a negative grace", full_run, _put(REQUEST, encode(REQ._replace(grace_seconds=-1.0))), "grace"),
]


@pytest.mark.parametrize(("case", "start", "mutate", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_decoder_refuses(case: str, start: Any, mutate: Any, message: str) -> None:
    files = start()
    decode_files(files)  # the unmutated set is accepted
    mutate(files)
    with pytest.raises(ControlError, match=re.escape(message)):
        decode_files(files)


def test_decoder_reads_back_every_record_it_encoded() -> None:
    records = decode_files(full_run())
    assert records == InstanceRecords(LAUNCH, INST, None, REQ, (REFUSAL,), TERM, TERM._replace(signal="KILL",
                                      at=T0 + timedelta(seconds=7)), OUT)


def test_decoder_accepts_each_prefix_of_the_writing_order() -> None:
    order = [LAUNCHING, INSTANCE, refused_name(1), REQUEST, TERMINATED, KILLED, OUTCOME]
    files = full_run()
    for n in range(len(order) + 1):
        decode_files({name: files[name] for name in order[:n]})


def test_an_outcome_written_before_the_digest_named_its_algorithm_is_read_as_sha256() -> None:
    files = full_run()
    _edit(OUTCOME, format="dunscaith.remote.outcome/1", stdout_digest=_DROP, stdout_sha256="ab" * 32)(files)
    assert decode_files(files).outcome == OUT._replace(stdout_digest="sha256:" + "ab" * 32)


def test_a_pending_request_for_another_instance_is_not_an_error() -> None:
    # the wrapper has yet to refuse it; status must still read the directory
    files = {LAUNCHING: encode(LAUNCH), INSTANCE: encode(INST), REQUEST: encode(FOREIGN_REQ)}
    assert decode_files(files).request == FOREIGN_REQ


def test_a_refusal_of_an_unreadable_request_keeps_no_request() -> None:
    files = {LAUNCHING: encode(LAUNCH), INSTANCE: encode(INST),
             refused_name(1): encode(Refused(INST.id, 1, None, "unreadable request: not JSON", T0))}
    assert decode_files(files).refused[0].request is None
