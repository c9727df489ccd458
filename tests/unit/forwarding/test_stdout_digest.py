"""The stdout digest as records and frames carry it, and what a request's recovery says of it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from blake3 import blake3

from dunscaith.domain.model import stdout_digest
from dunscaith.domain.model.forwarding.recovery import (
    HostReport,
    HostState,
    Received,
    SentRequest,
    decode_received,
    describe,
    encode_received,
)
from dunscaith.domain.model.strict_json import DecodeError, dumps_canonical

T0 = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
RID = "ab" * 16


def test_the_digest_is_blake3_of_the_bytes_and_says_so() -> None:
    running = stdout_digest.new_digest()
    for piece in (b"hello ", b"world\n"):
        running.update(piece)
    assert stdout_digest.finish(running) == "blake3:" + blake3(b"hello world\n").hexdigest()
    assert stdout_digest.of_bytes(b"x") == "blake3:" + blake3(b"x").hexdigest()
    assert stdout_digest.of_bytes(b"") == stdout_digest.EMPTY == "blake3:" + blake3(b"").hexdigest()


def test_a_request_end_recorded_by_an_earlier_version_is_read_with_its_sha256_named() -> None:
    old = dumps_canonical({"version": 1, "request_id": RID, "verdict": "completed", "reason": "EXIT_FRAME",
                           "stdout_bytes": 3, "stdout_sha256": "cd" * 32, "ended_at": T0.isoformat()})
    assert decode_received(old) == Received(RID, "completed", "EXIT_FRAME", 3, "sha256:" + "cd" * 32, T0)
    got = Received(RID, "completed", "EXIT_FRAME", 3, stdout_digest.of_bytes(b"hi\n"), T0)
    assert decode_received(encode_received(got)) == got


@pytest.mark.parametrize("digest", ["cd" * 32, "md5:" + "cd" * 32, "blake3:" + "cd" * 31])
def test_a_request_end_whose_digest_is_not_one_is_refused(digest: str) -> None:
    bad = dumps_canonical({"version": 2, "request_id": RID, "verdict": "completed", "reason": "EXIT_FRAME",
                           "stdout_bytes": 3, "stdout_digest": digest, "ended_at": T0.isoformat()})
    with pytest.raises(DecodeError, match="not a digest"):
        decode_received(bad)


def test_recovery_compares_digests_of_one_algorithm_only() -> None:
    sent = SentRequest(RID, "login1", "/opt/ds/bin/dunscaith", ("status", "j"), T0)
    ended = HostReport(RID, HostState.ENDED, 0, 3, stdout_digest.of_bytes(b"hi\n"))
    same = Received(RID, "may have run", "STARTED_THEN_LOST", 3, stdout_digest.of_bytes(b"hi\n"), T0)
    other = Received(RID, "may have run", "STARTED_THEN_LOST", 3, stdout_digest.of_bytes(b"ho\n"), T0)
    legacy = Received(RID, "may have run", "STARTED_THEN_LOST", 3, "sha256:" + "cd" * 32, T0)
    assert describe(sent, ended, same)[-1] == "you received 3 bytes of it, all of it."
    assert describe(sent, ended, other)[-1] == "you received 3 bytes of it; the rest is kept on login1."
    assert "only the count is compared" in describe(sent, ended, legacy)[-1]
    assert f"({ended.stdout_digest})" in describe(sent, ended, None)[0]
