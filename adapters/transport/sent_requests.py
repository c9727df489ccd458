"""The caller's record of forwarded requests: ``~/.config/dunscaith/forwarded/<request id>.json``.

In the home directory, so ``dunscaith forwarded REQUEST_ID`` works from any login node. Each file is
published whole and synced before the request goes out, and never replaced; what the caller saw at the
end goes beside it in ``<request id>.end.json``.
"""

from __future__ import annotations

import os
from pathlib import Path

from adapters.durable.config_dir import ensure_dunscaith_dir
from adapters.durable.publish import publish
from domain.model.forwarding.recovery import (
    Received,
    SentRequest,
    decode_received,
    decode_sent,
    encode_received,
    encode_sent,
)
from domain.model.forwarding.request import check_request_id
from domain.model.forwarding.verdict import Kind
from domain.model.strict_json import DecodeError, dumps_canonical
from ports.forwarding import UnknownRequest

MAX_FILE = 1 << 20
MAY_HAVE_RUN = Kind.MAY_HAVE_RUN.value


class FileSentRequests:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _ready(self) -> Path:
        # ~/.config/dunscaith may be the user's own, 0755 for their config.toml: used as it is, never re-moded
        return ensure_dunscaith_dir(self.directory)

    def record(self, sent: SentRequest) -> None:
        if not publish(self._ready(), f"{sent.request_id}.json", encode_sent(sent)):
            raise FileExistsError(f"forwarded request {sent.request_id} is recorded already")

    def ended(self, got: Received) -> None:
        publish(self._ready(), f"{got.request_id}.end.json", encode_received(got))

    def read(self, request_id: str) -> tuple[SentRequest, Received | None]:
        try:
            check_request_id(request_id)
        except ValueError as exc:
            raise UnknownRequest(str(exc)) from None
        sent_text = self._read(f"{request_id}.json")
        if sent_text is None:
            raise UnknownRequest(f"no forwarded request {request_id} was recorded by you (in {self.directory})")
        end_text = self._read(f"{request_id}.end.json")
        try:
            return decode_sent(sent_text), None if end_text is None else decode_received(end_text)
        except DecodeError as exc:
            raise UnknownRequest(f"the record of forwarded request {request_id} is damaged: {exc}") from None

    def unsettled(self, host: str) -> list[tuple[SentRequest, Received | None]]:
        try:
            names = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return []
        found = []
        for name in names:
            rid = name.removesuffix(".json")
            if name.startswith(".") or "." in rid or f"{rid}.settled.json" in names:
                continue
            try:
                sent, got = self.read(rid)
            except UnknownRequest:
                continue
            if sent.host == host and (got is None or got.verdict == MAY_HAVE_RUN):
                found.append((sent, got))
        return sorted(found, key=lambda pair: pair[0].sent_at)

    def settle(self, request_id: str, outcome: str) -> None:
        publish(self._ready(), f"{request_id}.settled.json", dumps_canonical({"outcome": outcome}))

    def _read(self, name: str) -> bytes | None:
        try:
            fd = os.open(self.directory / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        try:
            return os.read(fd, MAX_FILE)
        finally:
            os.close(fd)
