"""After "may have run": what the caller recorded before sending, and what the host says became of it.

The caller records each request (its id, the host, the command) before the first byte goes out, so
``dunscaith forwarded REQUEST_ID`` can ask the owning host, from any login node, what became of the
instance named by that id: the request is never sent again blindly.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from dunscaith.domain.model.recorded_time import aware_time
from dunscaith.domain.model.stdout_digest import from_legacy, is_legacy_hex, is_tagged, same_algorithm
from dunscaith.domain.model.strict_json import DecodeError, check_fields, decode_exact, dumps_canonical, loads_object

SENT_VERSION = 1
# 2: the stdout's digest tagged with its algorithm, in ``stdout_digest``; 1 (still read): a bare SHA-256 in
# ``stdout_sha256``.
RECEIVED_VERSION = 2
# A request whose outcome is known (it completed, it never ran, or the host's answer was learned) is kept
# this long after its last change, like a residual entry; one that may have run is kept until answered.
RESOLVED_KEPT = timedelta(days=30)


@dataclass(frozen=True, slots=True)
class SentRequest:
    request_id: str
    host: str
    binary: str
    argv: tuple[str, ...]
    sent_at: datetime


@dataclass(frozen=True, slots=True)
class Received:
    """What the caller saw when the session ended: the verdict and the stdout it was given."""

    request_id: str
    verdict: str  # verdict.Kind value
    reason: str  # verdict.Reason name
    stdout_bytes: int
    stdout_digest: str  # tagged (domain/model/stdout_digest.py)
    ended_at: datetime


def encode_sent(sent: SentRequest) -> bytes:
    return dumps_canonical({"version": SENT_VERSION, "request_id": sent.request_id, "host": sent.host,
                            "binary": sent.binary, "argv": list(sent.argv), "sent_at": sent.sent_at.isoformat()})


def decode_sent(text: bytes) -> SentRequest:
    obj = decode_exact(text, {"version": (int,), "request_id": (str,), "host": (str,), "binary": (str,),
                              "argv": (list,), "sent_at": (str,)}, "forwarded request")
    if obj["version"] != SENT_VERSION or not all(isinstance(w, str) for w in obj["argv"]):
        raise DecodeError("forwarded request: another version, or argv is not strings")
    return SentRequest(obj["request_id"], obj["host"], obj["binary"], tuple(obj["argv"]),
                       aware_time(obj["sent_at"], "forwarded request: sent_at"))


def encode_received(got: Received) -> bytes:
    return dumps_canonical({"version": RECEIVED_VERSION, "request_id": got.request_id, "verdict": got.verdict,
                            "reason": got.reason, "stdout_bytes": got.stdout_bytes,
                            "stdout_digest": got.stdout_digest, "ended_at": got.ended_at.isoformat()})


_RECEIVED = {"version": (int,), "request_id": (str,), "verdict": (str,), "reason": (str,), "stdout_bytes": (int,),
             "ended_at": (str,)}


def decode_received(text: bytes) -> Received:
    what = "forwarded request's end"
    obj = loads_object(text)
    if obj.get("version") == 1:  # written before the digest named its algorithm
        check_fields(obj, {**_RECEIVED, "stdout_sha256": (str,)}, what)
        if not is_legacy_hex(obj["stdout_sha256"]):
            raise DecodeError(f"{what}: stdout_sha256 is not a sha256 digest")
        digest = from_legacy(obj["stdout_sha256"])
    else:
        check_fields(obj, {**_RECEIVED, "stdout_digest": (str,)}, what)
        if obj["version"] != RECEIVED_VERSION or not is_tagged(obj["stdout_digest"]):
            raise DecodeError(f"{what}: another version, or stdout_digest is not a digest")
        digest = obj["stdout_digest"]
    return Received(obj["request_id"], obj["verdict"], obj["reason"], obj["stdout_bytes"], digest,
                    aware_time(obj["ended_at"], f"{what}: ended_at"))



class HostState(Enum):
    """What the owning host knows of a request's instance."""

    NOT_ARRIVED = "not arrived"  # no directory for this request id: nothing ran there (so far)
    REFUSED = "refused"  # the forwarded side refused it before running anything
    STARTING = "starting"  # the directory exists, the instance has not begun
    RUNNING = "running"  # a live wrapper owns it
    ENDED = "ended"  # the command ended: exit status, stdout count and digest
    FAILED = "failed"  # the command could not be started
    LOST = "lost"  # the wrapper was killed before recording an end: the command may still run


@dataclass(frozen=True, slots=True)
class HostReport:
    request_id: str
    state: HostState
    exit_code: int | None = None  # 128+n for signal n
    stdout_bytes: int | None = None
    stdout_digest: str | None = None  # tagged (domain/model/stdout_digest.py)
    detail: str = ""


_REPORT = {"request_id": (str,), "state": (str,), "exit_code": (int, type(None)),
           "stdout_bytes": (int, type(None)), "stdout_digest": (str, type(None)), "detail": (str,)}


def report_payload(report: HostReport) -> dict[str, Any]:
    return {"request_id": report.request_id, "state": report.state.value, "exit_code": report.exit_code,
            "stdout_bytes": report.stdout_bytes, "stdout_digest": report.stdout_digest, "detail": report.detail}


def read_report(obj: dict[str, Any]) -> HostReport:
    check_fields(obj, _REPORT, "result frame")
    try:
        state = HostState(obj["state"])
    except ValueError:
        raise DecodeError(f"result frame: unknown state {obj['state']!r}") from None
    if obj["stdout_digest"] is not None and not is_tagged(obj["stdout_digest"]):
        raise DecodeError("result frame: stdout_digest is not a digest")
    return HostReport(obj["request_id"], state, obj["exit_code"], obj["stdout_bytes"], obj["stdout_digest"],
                      obj["detail"])


def describe(sent: SentRequest, report: HostReport, received: Received | None) -> list[str]:
    """What happened to a forwarded request, in lines for the user."""
    command = " ".join(sent.argv)
    head = f"request {sent.request_id} ({command}) on {sent.host}: "
    match report.state:
        case HostState.NOT_ARRIVED:
            lines = [head + "it never arrived there: nothing ran. You may run the command again."]
        case HostState.REFUSED:
            lines = [head + f"refused before anything ran ({report.detail}). You may run the command again."]
        case HostState.STARTING | HostState.RUNNING:
            lines = [head + "it is running there now. Ask again later; do not run it again."]
        case HostState.FAILED:
            lines = [head + f"it could not be started ({report.detail}): nothing ran."]
        case HostState.LOST:
            lines = [head + "its owner on the host was killed before it recorded an end; the command may have run "
                     "(check the job's status before acting again)."]
        case HostState.ENDED:
            lines = [head + f"it ran and ended with exit status {report.exit_code}; it wrote "
                     f"{report.stdout_bytes} bytes to stdout ({report.stdout_digest})."]
            if received is not None:
                whole = received.stdout_bytes == report.stdout_bytes
                comparable = same_algorithm(received.stdout_digest, report.stdout_digest or "")
                if whole and not comparable:
                    lines.append(f"you received {received.stdout_bytes} bytes of it, as many as it wrote (the two "
                                 "digests were made by different versions of dunscaith, so only the count is "
                                 "compared).")
                else:
                    whole = whole and received.stdout_digest == report.stdout_digest
                    lines.append(f"you received {received.stdout_bytes} bytes of it"
                                 + (", all of it." if whole else f"; the rest is kept on {sent.host}."))
    return lines


def report_from_status(request_id: str, arrived: bool, side_live: bool, status: dict[str, Any] | None) -> HostReport:
    """The host's report on a request, from its directory and the instance's status object.

    ``arrived``: the request's directory exists (the forwarded side made it before anything else).
    ``side_live``: the forwarded side still holds the request's lock. ``status``: ``remote status``'s
    object for the request's instance, None when the instance directory was never made.
    """
    if not arrived:
        return HostReport(request_id, HostState.NOT_ARRIVED)
    state = None if status is None else status["state"]
    if state in (None, "empty"):
        if side_live:
            return HostReport(request_id, HostState.STARTING)
        return HostReport(request_id, HostState.REFUSED, detail="the forwarded side ended before starting it")
    if state in ("launching", "running", "terminating"):
        return HostReport(request_id, HostState.RUNNING)
    if state == "failed":
        failure = status["failure"] if status is not None else None
        detail = f"{failure['stage']}: {failure['message']}" if isinstance(failure, dict) else ""
        return HostReport(request_id, HostState.FAILED, exit_code=127, detail=detail)
    if state == "ended" and status is not None and isinstance(status.get("outcome"), dict):
        out = status["outcome"]
        code = out["exit_code"] if out["exit_code"] is not None else 128 + int(out["signal"] or 0)
        return HostReport(request_id, HostState.ENDED, code, out["stdout_bytes"], out["stdout_digest"])
    return HostReport(request_id, HostState.LOST)
