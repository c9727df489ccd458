"""The control files of one ``dunscaith remote`` instance: record types, encoders, one decoder.

Every file an instance directory holds is described here, and only here. ``decode_files`` reads the
files of a directory *together*, because most of what makes a file wrong is what it says about the
others: an outcome needs its instance, a kill needs its termination, a refusal must be of a request
this instance would not accept. ``admit_request`` is the one place a termination request is decoded
and matched against the instance it arrived at.

The records are NamedTuples, not dataclasses: this module is on the path of every local job's start
(the wrapper writes its records), where generating 12 dataclasses and importing ``dataclasses`` cost
~10 ms. A record is changed with ``_replace``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime

from dunscaith.domain.model.recorded_time import aware_time
from dunscaith.domain.model.remote.errors import RemoteError
from dunscaith.domain.model.stdout_digest import from_legacy, is_legacy_hex, is_tagged
from dunscaith.domain.model.strict_json import DecodeError, check_fields, dumps_canonical, loads_object

# ``typing`` (~3.5 ms) is not imported on the wrapper's path: the records are made by named_tuple.py's
# NamedTuple, which mypy checks as typing's (and which keeps the annotations as written)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from dunscaith.domain.model.named_tuple import NamedTuple

LAUNCHING = "launching.json"
INSTANCE = "instance.json"
FAILURE = "failure.json"
REQUEST = "terminate.json"
TERMINATED = "terminated.json"
KILLED = "killed.json"
OUTCOME = "outcome.json"
LOCK = "lock"
STDOUT_NOTE = "stdout"  # a note's ``file`` when the worker's output (a file) is what waits for space
# Patterns, compiled (and cached by ``re``) when a reader first needs them: the wrapper never does.
_REFUSED = r"refused\.([1-9][0-9]{0,8})\.json"
_HEX64 = r"[0-9a-f]{64}"

FAILURE_STAGES = ("spawn", "barrier", "cwd", "exec")
# The longest grace a request may carry, and the longest `remote terminate --wait`: 30 days. A longer one
# is a mistake (inf, 1e400), and a grace past what the wrapper's clock and select() take would end the
# wrapper with its worker unrecorded: so a request that carries one is refused, never admitted.
MAX_SECONDS = 30 * 24 * 3600


class ControlError(RemoteError, DecodeError):
    """A control file, or the set of them, is not what this instance could have written."""


def refused_name(number: int) -> str:
    return f"refused.{number}.json"


def refused_number(name: str) -> int | None:
    match = re.fullmatch(_REFUSED, name)
    return int(match.group(1)) if match else None


def _fmt(kind: str) -> str:
    return f"dunscaith.remote.{kind}/1"


# 2: the stdout's digest tagged with its algorithm (``stdout_digest``, domain/model/stdout_digest.py);
# a /1 file, its digest a bare SHA-256 in ``stdout_sha256``, is still read.
OUTCOME_FORMAT = "dunscaith.remote.outcome/2"


def _time(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("control-file times must be timezone-aware")
    return at.isoformat()


class InstanceId(NamedTuple):
    """Who an instance is: unique because the nonce is chosen per launch."""

    host: str
    nonce: str
    wrapper_pid: int
    worker_pid: int

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "nonce": self.nonce, "wrapper_pid": self.wrapper_pid,
                "worker_pid": self.worker_pid}


class Launching(NamedTuple):
    nonce: str
    host: str
    wrapper_pid: int
    argv: tuple[str, ...]
    cwd: str
    env_names: tuple[str, ...]
    at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"format": _fmt("launching"), "nonce": self.nonce, "host": self.host,
                "wrapper_pid": self.wrapper_pid, "argv": list(self.argv), "cwd": self.cwd,
                "env_names": sorted(self.env_names), "at": _time(self.at)}


class Instance(NamedTuple):
    nonce: str
    host: str
    wrapper_pid: int
    worker_pid: int
    process_group: int
    at: datetime

    @property
    def id(self) -> InstanceId:
        return InstanceId(self.host, self.nonce, self.wrapper_pid, self.worker_pid)

    def to_json(self) -> dict[str, Any]:
        return {"format": _fmt("instance"), "nonce": self.nonce, "host": self.host,
                "wrapper_pid": self.wrapper_pid, "worker_pid": self.worker_pid,
                "process_group": self.process_group, "at": _time(self.at)}


class Failure(NamedTuple):
    """The program never ran; which step of the start failed, and the system's reason."""

    nonce: str
    host: str
    wrapper_pid: int
    worker_pid: int | None
    stage: str
    errno: int | None
    message: str
    at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"format": _fmt("failure"), "nonce": self.nonce, "host": self.host,
                "wrapper_pid": self.wrapper_pid, "worker_pid": self.worker_pid, "stage": self.stage,
                "errno": self.errno, "message": self.message, "at": _time(self.at)}


class TerminateRequest(NamedTuple):
    """The request carries no time or caller id: the same request twice is the same file."""

    instance: InstanceId
    grace_seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"format": _fmt("terminate"), "instance": self.instance.to_json(),
                "grace_seconds": self.grace_seconds}


class Refused(NamedTuple):
    instance: InstanceId
    number: int
    request: TerminateRequest | None  # None: the file could not be read as a request
    reason: str
    at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"format": _fmt("refused"), "instance": self.instance.to_json(), "number": self.number,
                "request": None if self.request is None else self.request.to_json(),
                "reason": self.reason, "at": _time(self.at)}


class Signalled(NamedTuple):
    """A signal the kernel accepted for the worker's group: TERM (terminated) or KILL (killed)."""

    instance: InstanceId
    request: TerminateRequest
    signal: str
    process_group: int
    at: datetime

    def to_json(self) -> dict[str, Any]:
        kind = "terminated" if self.signal == "TERM" else "killed"
        return {"format": _fmt(kind), "instance": self.instance.to_json(), "request": self.request.to_json(),
                "signal": self.signal, "process_group": self.process_group, "at": _time(self.at)}


class Outcome(NamedTuple):
    instance: InstanceId
    exit_code: int | None
    signal: int | None
    stdout_bytes: int
    stdout_digest: str  # tagged: ``blake3:<hex>``; ``sha256:<hex>`` when read from an outcome/1 file
    at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"format": OUTCOME_FORMAT, "instance": self.instance.to_json(), "exit_code": self.exit_code,
                "signal": self.signal, "stdout_bytes": self.stdout_bytes,
                "stdout_digest": self.stdout_digest, "at": _time(self.at)}


class Blocked(NamedTuple):
    """The wrapper's note, kept in its lock file, that a control file could not be written yet.

    Written in place into room the lock file was given when the instance was claimed, so it needs no new
    space on a full disk; cleared once the file is written. Display only: the state of an instance is
    what its files say. ``exit_code``/``signal``: the worker's end, once known (what the waiting outcome
    says), so that "disk full" can say how the worker ended while its outcome waits.
    """

    file: str
    errno: int | None
    reason: str
    since: datetime
    exit_code: int | None = None
    signal: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"format": _fmt("blocked"), "file": self.file, "errno": self.errno, "reason": self.reason,
                "since": _time(self.since), "exit_code": self.exit_code, "signal": self.signal}


NOTE_BYTES = 512  # the room a claimed lock file is given for its note; a note is well under half of it


def encode_note(note: Blocked | None) -> bytes:
    """The lock file's whole note area: the note padded with spaces, or only spaces (no note)."""
    text = b"" if note is None else encode(note)
    if len(text) > NOTE_BYTES:  # a reason is a strerror; only a corrupt one could be this long
        text = encode(Blocked(note.file, note.errno, note.reason[:100], note.since, note.exit_code, note.signal)
                      ) if note is not None else b""
    return text.ljust(NOTE_BYTES, b" ")


def decode_note(data: bytes) -> Blocked | None:
    """The note in a lock file's bytes; None for no note, and for one that does not read (display only)."""
    text = data.strip(b" \0\n")
    if not text:
        return None
    try:
        obj = loads_object(text)
        _fields(obj, "blocked", {"file": _STR, "errno": _OPT_INT, "reason": _STR, "since": _STR,
                                 "exit_code": _OPT_INT, "signal": _OPT_INT}, "lock")
        return Blocked(obj["file"], obj["errno"], obj["reason"], _at(obj["since"], "lock"), obj["exit_code"],
                       obj["signal"])
    except DecodeError:
        return None


Record = Launching | Instance | Failure | TerminateRequest | Refused | Signalled | Outcome | Blocked


def encode(record: Record) -> bytes:
    return dumps_canonical(record.to_json())


class InstanceRecords(NamedTuple):
    """Everything an instance directory said at one reading, already checked for consistency."""

    launching: Launching | None = None
    instance: Instance | None = None
    failure: Failure | None = None
    request: TerminateRequest | None = None
    refused: tuple[Refused, ...] = ()
    terminated: Signalled | None = None
    killed: Signalled | None = None
    outcome: Outcome | None = None
    blocked: Blocked | None = None  # the wrapper's note: a file it could not write yet (display only)


# ---- decoding one object ---------------------------------------------------------------------------

_INT = (int,)
_STR = (str,)
_OPT_INT = (int, type(None))
_ID_SPEC = {"host": _STR, "nonce": _STR, "wrapper_pid": _INT, "worker_pid": _INT}


def _check(obj: Mapping[str, Any], spec: Mapping[str, tuple[type, ...]], what: str) -> None:
    try:
        check_fields(obj, spec, what)
    except ControlError:
        raise
    except DecodeError as exc:
        raise ControlError(str(exc)) from None


def _fields(obj: Mapping[str, Any], kind: str, spec: Mapping[str, tuple[type, ...]], what: str) -> None:
    if obj.get("format") != _fmt(kind):
        raise ControlError(f"{what}: format is {obj.get('format')!r}, expected {_fmt(kind)!r}")
    _check(obj, {"format": _STR, **spec}, what)


def _at(value: str, what: str) -> datetime:
    return aware_time(value, f"{what}: field at", ControlError)


def _pid(value: int, name: str, what: str) -> int:
    if value <= 0:
        raise ControlError(f"{what}: field {name} is not a process id: {value}")
    return value


def _instance_id(value: Any, what: str) -> InstanceId:
    if not isinstance(value, dict):
        raise ControlError(f"{what}: field instance is not an object")
    _check(value, _ID_SPEC, f"{what} (instance)")
    return InstanceId(value["host"], value["nonce"], _pid(value["wrapper_pid"], "wrapper_pid", what),
                      _pid(value["worker_pid"], "worker_pid", what))


def _request(obj: Any, what: str) -> TerminateRequest:
    if not isinstance(obj, dict):
        raise ControlError(f"{what}: a request is not an object")
    _fields(obj, "terminate", {"instance": (dict,), "grace_seconds": (int, float)}, what)
    grace = float(obj["grace_seconds"])
    if not math.isfinite(grace) or not 0 <= grace <= MAX_SECONDS:
        raise ControlError(f"{what}: grace_seconds must be a number from 0 to {MAX_SECONDS} (30 days)")
    return TerminateRequest(_instance_id(obj["instance"], what), grace)


def _launching(obj: dict[str, Any], what: str) -> Launching:
    _fields(obj, "launching", {"nonce": _STR, "host": _STR, "wrapper_pid": _INT, "argv": (list,), "cwd": _STR,
                               "env_names": (list,), "at": _STR}, what)
    if not obj["argv"] or not all(isinstance(a, str) for a in obj["argv"] + obj["env_names"]):
        raise ControlError(f"{what}: argv must be a non-empty list of strings, env_names a list of strings")
    return Launching(obj["nonce"], obj["host"], _pid(obj["wrapper_pid"], "wrapper_pid", what), tuple(obj["argv"]),
                     obj["cwd"], tuple(obj["env_names"]), _at(obj["at"], what))


def _instance(obj: dict[str, Any], what: str) -> Instance:
    _fields(obj, "instance", {"nonce": _STR, "host": _STR, "wrapper_pid": _INT, "worker_pid": _INT,
                              "process_group": _INT, "at": _STR}, what)
    if obj["process_group"] != obj["worker_pid"]:
        raise ControlError(f"{what}: the worker does not lead its process group")
    return Instance(obj["nonce"], obj["host"], _pid(obj["wrapper_pid"], "wrapper_pid", what),
                    _pid(obj["worker_pid"], "worker_pid", what), obj["process_group"], _at(obj["at"], what))


def _failure(obj: dict[str, Any], what: str) -> Failure:
    _fields(obj, "failure", {"nonce": _STR, "host": _STR, "wrapper_pid": _INT, "worker_pid": _OPT_INT,
                             "stage": _STR, "errno": _OPT_INT, "message": _STR, "at": _STR}, what)
    if obj["stage"] not in FAILURE_STAGES:
        raise ControlError(f"{what}: unknown stage {obj['stage']!r}")
    return Failure(obj["nonce"], obj["host"], obj["wrapper_pid"], obj["worker_pid"], obj["stage"], obj["errno"],
                   obj["message"], _at(obj["at"], what))


def _refused(obj: dict[str, Any], what: str) -> Refused:
    _fields(obj, "refused", {"instance": (dict,), "number": _INT, "request": (dict, type(None)),
                             "reason": _STR, "at": _STR}, what)
    request = None if obj["request"] is None else _request(obj["request"], what)
    return Refused(_instance_id(obj["instance"], what), obj["number"], request, obj["reason"], _at(obj["at"], what))


def _signalled(obj: dict[str, Any], kind: str, signal: str, what: str) -> Signalled:
    _fields(obj, kind, {"instance": (dict,), "request": (dict,), "signal": _STR, "process_group": _INT,
                        "at": _STR}, what)
    if obj["signal"] != signal:
        raise ControlError(f"{what}: signal is {obj['signal']!r}, expected {signal!r}")
    return Signalled(_instance_id(obj["instance"], what), _request(obj["request"], what), signal,
                     obj["process_group"], _at(obj["at"], what))


def _outcome(obj: dict[str, Any], what: str) -> Outcome:
    spec = {"instance": (dict,), "exit_code": _OPT_INT, "signal": _OPT_INT, "stdout_bytes": _INT, "at": _STR}
    if obj.get("format") == _fmt("outcome"):  # /1, written before the digest named its algorithm: a SHA-256
        _fields(obj, "outcome", {**spec, "stdout_sha256": _STR}, what)
        if not is_legacy_hex(obj["stdout_sha256"]):
            raise ControlError(f"{what}: stdout_sha256 is not a sha256 digest")
        digest = from_legacy(obj["stdout_sha256"])
    else:
        if obj.get("format") != OUTCOME_FORMAT:
            raise ControlError(f"{what}: format is {obj.get('format')!r}, expected {OUTCOME_FORMAT!r}")
        _check(obj, {"format": _STR, **spec, "stdout_digest": _STR}, what)
        if not is_tagged(obj["stdout_digest"]):
            raise ControlError(f"{what}: stdout_digest is not a digest")
        digest = obj["stdout_digest"]
    if (obj["exit_code"] is None) == (obj["signal"] is None):
        raise ControlError(f"{what}: exactly one of exit_code and signal must be set")
    if obj["stdout_bytes"] < 0:
        raise ControlError(f"{what}: stdout_bytes is not a count")
    return Outcome(_instance_id(obj["instance"], what), obj["exit_code"], obj["signal"], obj["stdout_bytes"],
                   digest, _at(obj["at"], what))


def _decode(text: bytes, what: str) -> dict[str, Any]:
    try:
        return loads_object(text)
    except DecodeError as exc:
        raise ControlError(f"{what}: {exc}") from None


# ---- the one decoder -------------------------------------------------------------------------------


def mismatch(request: TerminateRequest, instance: Instance) -> str | None:
    """Why ``request`` does not name ``instance``; None when it does."""
    wanted, have = request.instance, instance.id
    for name in ("nonce", "host", "wrapper_pid", "worker_pid"):
        if getattr(wanted, name) != getattr(have, name):
            mine, theirs = getattr(have, name), getattr(wanted, name)
            return f"names another instance ({name} {theirs!r}; this instance has {mine!r})"
    return None


def terminate_arguments_problem(grace_seconds: float, wait_seconds: float, nonce: str | None) -> str | None:
    """What is wrong with ``remote terminate``'s own arguments, before any instance is looked at; None if nothing."""
    for option, seconds in (("--grace", grace_seconds), ("--wait", wait_seconds)):
        if not (math.isfinite(seconds) and 0 <= seconds <= MAX_SECONDS):
            return f"{option} {seconds:g}: give a number of seconds from 0 to {MAX_SECONDS} (30 days)"
    if nonce is not None and (not nonce.strip() or not nonce.isprintable()):
        return "--nonce is empty or holds a control character: give the nonce of the instance's instance.json"
    return None


def reading_order(names: Iterable[str]) -> list[str]:
    """The control files to read, among ``names``' refusals and the fixed names, in that order.

    The reverse of the order the wrapper writes them, so a reader that finds a file has found every
    file written before it (a refusal read late could otherwise be one written after the outcome).
    """
    refused = sorted((n for n in names if refused_number(n) is not None), key=lambda n: -(refused_number(n) or 0))
    return [OUTCOME, KILLED, TERMINATED, *refused, REQUEST, FAILURE, INSTANCE, LAUNCHING]


def decode_files(files: Mapping[str, bytes]) -> InstanceRecords:
    """Decode the control files of one directory (final names only; absent files are simply missing).

    Raises ControlError naming the file and the reason for every case this instance could not have
    written: another format, a missing or extra field, a file naming another launch or instance, an
    outcome without its instance, a failure together with an outcome, a kill without its termination,
    a confirmation without its accepted request, a refusal naming another instance, a refusal of a
    request that would be accepted.
    """
    unknown = sorted(n for n in files if n not in _KNOWN and refused_number(n) is None)
    if unknown:
        raise ControlError(f"{unknown[0]}: not a control file of an instance")
    records = _decode_each(files)
    if records.launching is None and files:
        raise ControlError(f"{sorted(files)[0]}: no launching.json names the launch it belongs to")
    _check_launch(records)
    _check_instance(records)
    if records.killed is not None and (records.terminated is None
                                       or records.killed.request != records.terminated.request):
        raise ControlError(f"{KILLED}: a kill without its termination")
    return records


def _decode_each(files: Mapping[str, bytes]) -> InstanceRecords:
    """Each file on its own, before any check between them."""

    def obj(name: str) -> dict[str, Any]:
        return _decode(files[name], name)

    # in the order of the old reader, so the first file named unreadable stays the same
    launching = _launching(obj(LAUNCHING), LAUNCHING) if LAUNCHING in files else None
    instance = _instance(obj(INSTANCE), INSTANCE) if INSTANCE in files else None
    failure = _failure(obj(FAILURE), FAILURE) if FAILURE in files else None
    request = _request(obj(REQUEST), REQUEST) if REQUEST in files else None
    terminated = _signalled(obj(TERMINATED), "terminated", "TERM", TERMINATED) if TERMINATED in files else None
    killed = _signalled(obj(KILLED), "killed", "KILL", KILLED) if KILLED in files else None
    outcome = _outcome(obj(OUTCOME), OUTCOME) if OUTCOME in files else None
    refused: list[Refused] = []
    for name in sorted((n for n in files if refused_number(n) is not None), key=lambda n: refused_number(n) or 0):
        refusal = _refused(obj(name), name)
        if refusal.number != refused_number(name):
            raise ControlError(f"{name}: carries number {refusal.number}")
        refused.append(refusal)
    return InstanceRecords(launching, instance, failure, request, tuple(refused), terminated, killed, outcome)


def _check_launch(r: InstanceRecords) -> None:
    """The instance and a launch failure belong to the launch launching.json names, never both an outcome."""
    if r.launching is not None:
        launch = (r.launching.nonce, r.launching.host, r.launching.wrapper_pid)
        for name, started in ((INSTANCE, r.instance), (FAILURE, r.failure)):
            if started is not None and (started.nonce, started.host, started.wrapper_pid) != launch:
                raise ControlError(f"{name}: names another launch than launching.json")
    if r.failure is not None and r.outcome is not None:
        raise ControlError(f"{OUTCOME}: an outcome together with a launch failure")
    if r.failure is not None and r.instance is not None and r.failure.worker_pid != r.instance.worker_pid:
        raise ControlError(f"{FAILURE}: names another worker than instance.json")


def _check_instance(r: InstanceRecords) -> None:
    """Every file after instance.json belongs to it: the request may name another instance (it is then
    refused), no other file may; a refusal refuses only what this instance would not accept, and a
    termination confirms the accepted request."""
    named: list[tuple[str, TerminateRequest | Signalled | Outcome | Refused | None]] = [
        (OUTCOME, r.outcome), (TERMINATED, r.terminated), (KILLED, r.killed), (REQUEST, r.request)]
    named += [(refused_name(refusal.number), refusal) for refusal in r.refused]
    instance = r.instance
    if instance is None:
        for name, rec in named:
            if rec is not None:
                raise ControlError(f"{name}: no instance.json for it to belong to")
        return
    for name, rec in named:
        if rec is not None and name != REQUEST and rec.instance != instance.id:
            raise ControlError(f"{name}: names another instance than instance.json")
    for refusal in r.refused:
        if refusal.request is not None and mismatch(refusal.request, instance) is None:
            raise ControlError(f"{refused_name(refusal.number)}: refuses a request this instance would accept")
    terminated = r.terminated
    if terminated is not None and (r.request != terminated.request or mismatch(terminated.request, instance)):
        raise ControlError(f"{TERMINATED}: confirms a request that is not the accepted terminate.json")


_KNOWN = frozenset({LAUNCHING, INSTANCE, FAILURE, REQUEST, TERMINATED, KILLED, OUTCOME})


# ---- admitting a request ---------------------------------------------------------------------------


class Admitted(NamedTuple):
    request: TerminateRequest


class Refusal(NamedTuple):
    request: TerminateRequest | None
    reason: str


def admit_request(text: bytes, instance: Instance) -> Admitted | Refusal:
    """Decode the request file found at ``instance`` and decide whether this instance accepts it."""
    try:
        request = _request(_decode(text, REQUEST), REQUEST)
    except DecodeError as exc:
        return Refusal(None, f"unreadable request: {exc}")
    reason = mismatch(request, instance)
    return Admitted(request) if reason is None else Refusal(request, reason)
