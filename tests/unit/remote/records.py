"""A consistent instance directory, built with the control module's own encoders, to mutate in tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from blake3 import blake3

from dunscaith.domain.model.remote.control import (
    FAILURE,
    INSTANCE,
    KILLED,
    LAUNCHING,
    OUTCOME,
    REQUEST,
    TERMINATED,
    Failure,
    Instance,
    Launching,
    Outcome,
    Refused,
    Signalled,
    TerminateRequest,
    encode,
    refused_name,
)

T0 = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
NONCE = "0123456789abcdef0123456789abcdef"
LAUNCH = Launching(NONCE, "node1", 100, ("sh", "-c", "echo hi"), "/home/ana", ("PATH",), T0)
INST = Instance(NONCE, "node1", 100, 101, 101, T0 + timedelta(seconds=1))
REQ = TerminateRequest(INST.id, 5.0)
FOREIGN_REQ = TerminateRequest(INST.id._replace(nonce="f" * 32), 5.0)
TERM = Signalled(INST.id, REQ, "TERM", 101, T0 + timedelta(seconds=2))
KILL = Signalled(INST.id, REQ, "KILL", 101, T0 + timedelta(seconds=7))
REFUSAL = Refused(INST.id, 1, FOREIGN_REQ, "names another instance", T0 + timedelta(seconds=2))
OUT = Outcome(INST.id, None, 9, 3, "blake3:" + blake3(b"hi\n").hexdigest(), T0 + timedelta(seconds=8))
FAIL = Failure(NONCE, "node1", 100, 101, "exec", 2, "No such file or directory", T0 + timedelta(seconds=1))


def full_run() -> dict[str, bytes]:
    """Every file a terminated run writes: launching, instance, a refusal, the request, TERM, KILL, outcome."""
    return {
        LAUNCHING: encode(LAUNCH), INSTANCE: encode(INST), refused_name(1): encode(REFUSAL),
        REQUEST: encode(REQ), TERMINATED: encode(TERM), KILLED: encode(KILL), OUTCOME: encode(OUT),
    }


def failed_start() -> dict[str, bytes]:
    return {LAUNCHING: encode(LAUNCH), INSTANCE: encode(INST), FAILURE: encode(FAIL)}
