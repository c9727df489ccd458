"""The caller's record of forwarded requests: ``~/.config/dunscaith/forwarded/<request id>.json``.

In the home directory, so ``dunscaith forwarded REQUEST_ID`` works from any login node. Each file is
published whole and synced before the request goes out, and never replaced; what the caller saw at the
end goes beside it in ``<request id>.end.json``, and the host's later answer in ``.settled.json``.

A command reads only what it needs: ``read`` opens one request's files by id, and ``unsettled`` reads
only the requests whose outcome is not known here, each marked by an empty ``<request id>.pending``
made *before* the request is recorded (so a request is never recorded without its mark) and removed
once the session ended with the command's exit status or proof it never ran, or the host's answer
was learned. Requests whose outcome is known expire: their files are removed ``RESOLVED_KEPT`` (30
days) after their last change, at most one pass a day; a request that may have run is never expired.
Records of an earlier build (no marks yet) are marked once, on first use, from their own files.
"""

from __future__ import annotations

import contextlib
import os
from datetime import datetime, timedelta
from pathlib import Path

from dunscaith.adapters.durable.config_dir import ensure_dunscaith_dir
from dunscaith.adapters.durable.private_dir import UnsafeDirectory
from dunscaith.adapters.durable.publish import publish
from dunscaith.adapters.durable.sync import sync_dir
from dunscaith.domain.model.forwarding.recovery import (
    Received,
    SentRequest,
    decode_received,
    decode_sent,
    encode_received,
    encode_sent,
)
from dunscaith.domain.model.forwarding.request import check_request_id
from dunscaith.domain.model.forwarding.verdict import Kind
from dunscaith.domain.model.strict_json import DecodeError, dumps_canonical
from dunscaith.ports.forwarding import SentRequestsUnusable, UnknownRequest

MAX_FILE = 1 << 20
MAY_HAVE_RUN = Kind.MAY_HAVE_RUN.value
PENDING = ".pending"
MARKED = ".marked-v2"  # this folder's requests carry their marks (made once, for an earlier build's records)
EXPIRY_STAMP = ".expired"  # its time: the last expiry pass
EXPIRY_EVERY = timedelta(days=1)
_SUFFIXES = (".settled.json", ".end.json", PENDING, ".json")  # the longest first


class FileSentRequests:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _ready(self) -> Path:
        # ~/.config/dunscaith may be the user's own, 0755 for their config.toml: used as it is, never re-moded
        try:
            return ensure_dunscaith_dir(self.directory)
        except UnsafeDirectory as exc:
            raise SentRequestsUnusable(f"forwarded requests cannot be recorded: {exc}") from None

    def record(self, sent: SentRequest) -> None:
        directory = self._ready()
        self._mark_earlier(directory)
        self._touch(directory / f"{sent.request_id}{PENDING}")  # synced with the record's own publish
        if not publish(directory, f"{sent.request_id}.json", encode_sent(sent)):
            raise FileExistsError(f"forwarded request {sent.request_id} is recorded already")

    def ended(self, got: Received) -> None:
        # Its bytes are synced (whole or absent), its name is not (one fsync less on every forwarded
        # command's way out): a power loss that loses it loses only what this side saw. Its mark, removed
        # after it unsynced too, then either stays (the host is asked again, as for "may have run") or
        # is gone with it (`forwarded REQUEST_ID` asks the host, which answers alone); the request
        # itself was recorded durably before it was sent.
        publish(self._ready(), f"{got.request_id}.end.json", encode_received(got), durable_name=False)
        if got.verdict != MAY_HAVE_RUN:
            self._resolve(got.request_id)

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
            names = set(os.listdir(self.directory))
        except (FileNotFoundError, NotADirectoryError):  # nothing recorded (record refuses such a folder)
            return []
        self._ready()  # a folder record would refuse (open to others, a symlink) is refused before any mark
        if MARKED not in names:
            self._mark_earlier(self.directory)
            names = set(os.listdir(self.directory))
        found = []
        for name in names:
            rid = name.removesuffix(PENDING)
            if rid == name or name.startswith(".") or f"{rid}.settled.json" in names:
                continue
            try:
                sent, got = self.read(rid)
            except UnknownRequest:
                continue  # marked, and not recorded (yet, or ever): it was never sent
            if sent.host == host and (got is None or got.verdict == MAY_HAVE_RUN):
                found.append((sent, got))
        return sorted(found, key=lambda pair: (pair[0].sent_at, pair[0].request_id))

    def settle(self, request_id: str, outcome: str) -> None:
        publish(self._ready(), f"{request_id}.settled.json", dumps_canonical({"outcome": outcome}))
        self._resolve(request_id)

    def expire(self, now: datetime, kept: timedelta) -> int:
        """Remove the files of requests whose outcome is known and that have not changed for ``kept``;
        at most one pass per EXPIRY_EVERY. Returns how many requests were removed. A folder that cannot
        be read or changed removes nothing and never stops the command."""
        try:
            return self._expire(now, kept)
        except OSError:
            return 0

    def _expire(self, now: datetime, kept: timedelta) -> int:
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return 0
        stamp = self.directory / EXPIRY_STAMP
        with contextlib.suppress(FileNotFoundError):
            if now.timestamp() - os.stat(stamp, follow_symlinks=False).st_mtime < EXPIRY_EVERY.total_seconds():
                return 0
        if MARKED not in names:
            return 0  # marks first (the next unsettled or record makes them): nothing unmarked is judged
        files: dict[str, list[str]] = {}
        for name in names:
            if name.startswith("."):
                continue
            rid = next((name.removesuffix(s) for s in _SUFFIXES if name.endswith(s)), None)
            if rid is not None:
                files.setdefault(rid, []).append(name)
        removed = 0
        for rid, own in files.items():
            if f"{rid}{PENDING}" in own or f"{rid}.json" not in own:
                continue  # may have run, or not recorded whole: kept
            try:
                newest = max(os.stat(self.directory / n, follow_symlinks=False).st_mtime for n in own)
            except FileNotFoundError:
                continue  # another command removed it meanwhile
            if now.timestamp() - newest < kept.total_seconds():
                continue
            for name in sorted(own, key=lambda n: n != f"{rid}.json"):  # the request last: never half-judged
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.directory / name)
            removed += 1
        self._touch(stamp, at=now)
        return removed

    # ---- marks -----------------------------------------------------------------------------------------

    def _mark_earlier(self, directory: Path) -> None:
        """Once per folder: mark the requests an earlier build recorded whose outcome is not known here."""
        if os.path.lexists(directory / MARKED):
            return
        names = set(os.listdir(directory))
        for name in names:
            rid = name.removesuffix(".json")
            if name.startswith(".") or "." in rid or rid == name or f"{rid}.settled.json" in names:
                continue
            try:
                _, got = self.read(rid)
            except UnknownRequest:
                continue
            if got is None or got.verdict == MAY_HAVE_RUN:
                self._touch(directory / f"{rid}{PENDING}")
        sync_dir(directory)  # the marks before the folder says it has them
        self._touch(directory / MARKED)

    def _resolve(self, request_id: str) -> None:
        # not synced: a mark that comes back after a crash only means the host is asked once more
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.directory / f"{request_id}{PENDING}")

    @staticmethod
    def _touch(path: Path, at: datetime | None = None) -> None:
        """An empty file of ours at ``path`` (kept if there); ``at``: its time is set to that."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (0 if at is not None else os.O_EXCL)
        try:
            os.close(os.open(path, flags, 0o600))
        except FileExistsError:
            return
        if at is not None:
            os.utime(path, (at.timestamp(), at.timestamp()), follow_symlinks=False)

    def _read(self, name: str) -> bytes | None:
        try:
            fd = os.open(self.directory / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        try:
            return os.read(fd, MAX_FILE)
        finally:
            os.close(fd)

