"""The forwarded request and its token: the arguments travel as one base64 token, never as a command line.

Joining arguments for ssh lets a remote shell read them (``$(...)``, backticks, ``;``, ``!``), and
per-argument quoting differs between sh and tcsh. The token's alphabet (letters, digits, ``-``,
``_``, after a fixed prefix) means the same thing to every shell, so nothing needs quoting.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from enum import Enum

from dunscaith.domain.model.forwarding.hidden_flag import FORWARDED_ENV as FORWARDED_ENV  # the protocol's flag
from dunscaith.domain.model.strict_json import DecodeError, check_fields, dumps_canonical

# 2: the exit and result frames carry the stdout's digest tagged with its algorithm (``stdout_digest``,
# BLAKE3) where 1 carried a bare SHA-256. A host that speaks only the other refuses before anything runs.
PROTOCOL = 2
KNOWN_PROTOCOLS = frozenset({PROTOCOL})
TOKEN_PREFIX = "dsf."
# The longest token accepted: a command line of a few job arguments is far below it; the limit keeps
# a remote command line inside every ARG_MAX.
MAX_TOKEN_CHARS = 64 * 1024
_REQUEST_ID = re.compile(r"[0-9a-f]{32}")
_TOKEN_BODY = re.compile(r"[A-Za-z0-9_-]*")
# A remote binary path goes on the remote command line unquoted, so it may hold only characters no
# shell interprets.
_SAFE_PATH = re.compile(r"/[A-Za-z0-9_./+-]*")


class Kind(Enum):
    RUN = "run"  # run a dunscaith command under ``remote run``, as an instance named by the request id
    OUTCOME = "outcome"  # report what became of an earlier request's instance (nothing is run)


class TokenError(DecodeError):
    """The token is not one this dunscaith can read; the message says why."""


class UnknownProtocol(TokenError):
    """The caller speaks a forwarding protocol this host does not know: refused, naming both sides."""

    def __init__(self, theirs: object, caller_version: object, ours: int, our_version: str) -> None:
        super().__init__(
            f"the caller (dunscaith {caller_version}) speaks forwarding protocol {theirs}; this host runs "
            f"dunscaith {our_version}, which knows protocol {', '.join(map(str, sorted(KNOWN_PROTOCOLS)))} "
            f"only (protocol {ours}): nothing was run; install the same dunscaith on both hosts")
        self.theirs = theirs
        self.caller_version = caller_version


class UnsafeBinaryPath(ValueError):
    def __init__(self, path: str) -> None:
        super().__init__(f"the dunscaith path {path!r} in the pointer is not absolute or holds characters a "
                         "remote shell would interpret; it cannot be forwarded to")


@dataclass(frozen=True, slots=True)
class ForwardRequest:
    request_id: str  # chosen by the caller and recorded before sending; names the instance on the host
    kind: Kind
    argv: tuple[str, ...]  # the dunscaith arguments (without the program), e.g. ("status", "job-1")
    caller_version: str
    caller_host: str
    heartbeat_seconds: float  # the caller sends a beat this often; the host drains when they stop
    terminal: bool  # the caller handed ssh a terminal: no framed input and no beats then
    protocol: int = PROTOCOL


def check_request_id(text: str) -> str:
    if not _REQUEST_ID.fullmatch(text):
        raise ValueError(f"{text!r} is not a request id (32 lowercase hex digits)")
    return text


def check_binary_path(path: str) -> str:
    if not _SAFE_PATH.fullmatch(path) or "/../" in f"{path}/":
        raise UnsafeBinaryPath(path)
    return path


_FIELDS = {
    "protocol": (int,),
    "request_id": (str,),
    "kind": (str,),
    "argv": (list,),
    "caller_version": (str,),
    "caller_host": (str,),
    "heartbeat_seconds": (int, float),
    "terminal": (bool,),
}


def encode_token(request: ForwardRequest) -> str:
    check_request_id(request.request_id)
    body = dumps_canonical({
        "protocol": request.protocol,
        "request_id": request.request_id,
        "kind": request.kind.value,
        "argv": list(request.argv),
        "caller_version": request.caller_version,
        "caller_host": request.caller_host,
        "heartbeat_seconds": request.heartbeat_seconds,
        "terminal": request.terminal,
    })
    token = TOKEN_PREFIX + base64.urlsafe_b64encode(body).decode("ascii").rstrip("=")
    if len(token) > MAX_TOKEN_CHARS:
        raise ValueError(f"the command is too long to forward ({len(token)} characters as a token)")
    return token


def decode_token(token: str, our_version: str) -> ForwardRequest:
    """The request in ``token``. UnknownProtocol before anything else is read; TokenError if damaged."""
    if not token.startswith(TOKEN_PREFIX):
        raise TokenError("not a forwarding token (no dsf. prefix)")
    body = token[len(TOKEN_PREFIX):]
    if len(token) > MAX_TOKEN_CHARS or not _TOKEN_BODY.fullmatch(body):
        raise TokenError("not a forwarding token (too long, or not base64url)")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        obj = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise TokenError("not a forwarding token (not base64 JSON)") from None
    if not isinstance(obj, dict):
        raise TokenError("not a forwarding token (not a JSON object)")
    # The protocol is read first and alone: a later protocol may change every other field.
    protocol = obj.get("protocol")
    if type(protocol) is not int or protocol not in KNOWN_PROTOCOLS:
        raise UnknownProtocol(protocol, obj.get("caller_version", "of an unknown version"), PROTOCOL, our_version)
    try:
        check_fields(obj, _FIELDS, "forwarding token")
    except DecodeError as exc:
        raise TokenError(str(exc)) from None
    argv = obj["argv"]
    if not all(isinstance(word, str) for word in argv):
        raise TokenError("forwarding token: argv holds something other than strings")
    try:
        kind = Kind(obj["kind"])
        check_request_id(obj["request_id"])
    except ValueError as exc:
        raise TokenError(f"forwarding token: {exc}") from None
    heartbeat = float(obj["heartbeat_seconds"])
    if not 0.05 <= heartbeat <= 3600:
        raise TokenError(f"forwarding token: heartbeat of {heartbeat} s is out of range")
    return ForwardRequest(obj["request_id"], kind, tuple(argv), obj["caller_version"], obj["caller_host"],
                          heartbeat, obj["terminal"], protocol)


def remote_command(binary: str, token: str = "-") -> str:
    """The one command line the remote shell sees: an absolute path, the hidden entry, the token or ``-``.

    ``-`` (TOKEN_ON_STDIN): the token follows as the first line of the command's stdin (``token_line``),
    so the session can be started before the request is recorded and the token written only after: the
    connection's set-up then overlaps the caller's recording, and nothing of the request leaves before
    it is recorded. A terminal session (whose stdin is the terminal) carries the token on the line."""
    return f"{check_binary_path(binary)} {FORWARDED_ENTRY} {token}"


def token_line(token: str) -> bytes:
    """What goes first into the stdin of a ``remote_command(binary, TOKEN_ON_STDIN)`` session."""
    return token.encode("ascii") + b"\n"


TOKEN_ON_STDIN = "-"


FORWARDED_ENTRY = "_forwarded"  # hidden: the host's side of forwarding; never typed by a user


def version_warning(caller_version: str, host_version: str, host: str) -> str | None:
    """Same protocol, other versions: the command runs, with this warning."""
    if caller_version == host_version:
        return None
    return (f"{host} runs dunscaith {host_version} and this is dunscaith {caller_version}; the command runs "
            f"(same forwarding protocol {PROTOCOL}), but install the same version on every login node")
