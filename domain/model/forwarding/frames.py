"""Frames: how output and input travel between the caller and the forwarded side.

A shell's startup files (``.bashrc``, ``.cshrc``, a site's motd script) can print into the stream
before the command runs and after it ends, and a terminal on the remote adds ``\\r``. So every byte
of the command travels inside a frame, one line each:

    DSF1 <request id> <kind> <payload>\\n

where the payload is base64 (``-`` when empty). A frame ends its line; what comes before it on the line
is discarded (and counted), as is every line that does not end in a frame of this request: a terminal
on the remote echoes what is typed there (a ``^C``, keys typed without Enter) into the stream, in front
of the next frame. The request id in every frame means text printed by a startup file, which cannot
know it, is never taken for a frame. The remote's exit status travels in the final ``exit``
frame, because ssh's own 255 means a remote ``exit 255``, a remote killed by a signal, and a dropped
connection alike.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from dunscaith.domain.model.stdout_digest import is_tagged
from dunscaith.domain.model.strict_json import DecodeError, check_fields

MAGIC = b"DSF1"
MAX_PAYLOAD = 48 * 1024  # bytes of data per frame before base64
MAX_LINE = 2 * MAX_PAYLOAD  # longer lines are never frames: discarded without being held whole
# Either side takes the other for gone after this many heartbeat intervals (the request's) without a frame.
SILENCE_BEATS = 4
_LINE = re.compile(rb"DSF1 ([0-9a-f]{32}) ([a-z-]{1,16}) ([A-Za-z0-9+/=]+|-)")


class FrameKind(Enum):
    # from the forwarded side
    HELLO = "hello"  # first: the host's protocol, version and name; nothing ran before it
    OUT = "out"  # the command's stdout bytes
    ERR = "err"  # the command's stderr bytes
    RESULT = "result"  # the answer to an outcome query
    EXIT = "exit"  # final: the command's exit status and stdout count and digest
    # from the caller
    IN = "in"  # the user's stdin bytes, while it lasts
    IN_END = "in-end"  # the user's stdin ended: the command's stdin is closed; the stream stays open
    # both ways
    BEAT = "beat"  # "still here": the other side drains when they stop


@dataclass(frozen=True, slots=True)
class Frame:
    kind: FrameKind
    payload: bytes = b""

    def json(self) -> dict[str, Any]:
        try:
            value = json.loads(self.payload)
        except (ValueError, UnicodeDecodeError):
            raise DecodeError(f"the {self.kind.value} frame is not JSON") from None
        if not isinstance(value, dict):
            raise DecodeError(f"the {self.kind.value} frame is not a JSON object")
        return value


def encode_frame(request_id: str, kind: FrameKind, payload: bytes = b"") -> bytes:
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"a frame carries at most {MAX_PAYLOAD} bytes")
    body = base64.b64encode(payload) if payload else b"-"
    return b"%s %s %s %s\n" % (MAGIC, request_id.encode("ascii"), kind.value.encode("ascii"), body)


def encode_data(request_id: str, kind: FrameKind, data: bytes) -> Iterator[bytes]:
    """``data`` as frames of at most MAX_PAYLOAD bytes each (nothing for no data)."""
    for start in range(0, len(data), MAX_PAYLOAD):
        yield encode_frame(request_id, kind, data[start:start + MAX_PAYLOAD])


def encode_json(request_id: str, kind: FrameKind, obj: dict[str, Any]) -> bytes:
    return encode_frame(request_id, kind, json.dumps(obj, sort_keys=True, separators=(",", ":")).encode())


@dataclass
class FrameReader:
    """Cuts a byte stream into this request's frames; everything else is discarded and counted."""

    request_id: str
    discarded_bytes: int = 0
    _buffer: bytearray = field(default_factory=bytearray)
    _skipping: bool = False  # inside an over-long line: drop bytes up to its end
    _head: bytes = field(default=b"", init=False)  # how this request's frames begin

    def __post_init__(self) -> None:
        self._head = b"%s %s " % (MAGIC, self.request_id.encode("ascii"))

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames: list[Frame] = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > MAX_LINE:
                    self.discarded_bytes += len(self._buffer)
                    self._buffer.clear()
                    self._skipping = True
                return frames
            line = bytes(self._buffer[:end])
            del self._buffer[:end + 1]
            if self._skipping:
                self._skipping = False
                self.discarded_bytes += len(line) + 1
                continue
            frame, start = self._frame(line)
            self.discarded_bytes += len(line) + 1 if frame is None else start
            if frame is not None:
                frames.append(frame)

    def finish(self) -> None:
        """The stream ended: a partial last line is not a frame."""
        self.discarded_bytes += len(self._buffer)
        self._buffer.clear()

    def _frame(self, line: bytes) -> tuple[Frame | None, int]:
        """The frame that ends ``line``, and where it starts (what is before it is not the command's)."""
        if line.endswith(b"\r"):  # a terminal on the remote turns \n into \r\n
            line = line[:-1]
        start = line.rfind(self._head)
        if start < 0:
            return None, 0
        match = _LINE.fullmatch(line, start)
        if match is None:
            return None, 0
        try:
            kind = FrameKind(match.group(2).decode())
        except ValueError:
            return None, 0
        body = match.group(3)
        if body == b"-":
            return Frame(kind), start
        try:
            return Frame(kind, base64.b64decode(body, validate=True)), start
        except binascii.Error:
            return None, 0


@dataclass(frozen=True, slots=True)
class Hello:
    protocol: int
    version: str
    host: str


@dataclass(frozen=True, slots=True)
class ExitStatus:
    """The final frame: how the command ended on the host, and what its stdout was."""

    code: int  # the exit code; 128+n when the command died by signal n
    stdout_bytes: int
    stdout_digest: str  # tagged: ``blake3:<hex>`` (domain/model/stdout_digest.py)


def hello_payload(hello: Hello) -> dict[str, Any]:
    return {"protocol": hello.protocol, "version": hello.version, "host": hello.host}


def read_hello(frame: Frame) -> Hello:
    obj = frame.json()
    check_fields(obj, {"protocol": (int,), "version": (str,), "host": (str,)}, "hello frame")
    return Hello(obj["protocol"], obj["version"], obj["host"])


def exit_payload(status: ExitStatus) -> dict[str, Any]:
    return {"code": status.code, "stdout_bytes": status.stdout_bytes, "stdout_digest": status.stdout_digest}


def read_exit(frame: Frame) -> ExitStatus:
    obj = frame.json()
    check_fields(obj, {"code": (int,), "stdout_bytes": (int,), "stdout_digest": (str,)}, "exit frame")
    if not 0 <= obj["code"] <= 255:
        raise DecodeError(f"exit frame: code {obj['code']} is not an exit status")
    if not is_tagged(obj["stdout_digest"]):
        raise DecodeError("exit frame: stdout_digest is not a digest")
    return ExitStatus(obj["code"], obj["stdout_bytes"], obj["stdout_digest"])
