"""JsonlRecordStore: each run's record is a file of JSON lines, each synced before the next request.

Layout under the records folder: ``<site>/<run>/<UTC time>-<pid>.jsonl`` for records (the names
sort by time, so the newest of a run folder is the last), ``<site>/older_decisions.jsonl`` for
decisions on records of other runners. Files are 0600 in 0700 folders, opened without following
symlinks, and only ever appended to.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from dunscaith.adapters.durable.private_dir import UnsafeDirectory, check_private_dir, ensure_private_dir
from dunscaith.adapters.durable.private_read import UnsafeFile, read_private, read_private_stat
from dunscaith.adapters.durable.sync import sync_dir, sync_fd
from dunscaith.domain.model.qdevices.decisions import OlderDecision, from_json
from dunscaith.domain.model.qdevices.identity import RecordIdentity
from dunscaith.domain.model.qdevices.lines import Line, LineType, decode, encode, make
from dunscaith.domain.model.strict_json import DecodeError, dumps_canonical, loads_object
from dunscaith.ports.run_record import RecordRead, RecordUnreadable, RecordWriteFailed

DECISIONS = "older_decisions.jsonl"
SUFFIX = ".jsonl"
_MAX_RECORD_BYTES = 1 << 30  # far above any run: a guard against a planted giant, not a quota


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class JsonlAppender:
    """An open record; every ``append`` is written, flushed and synced before it returns."""

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd
        self.syncs = 0  # for the benchmark: fsyncs made through this appender

    def append(self, line: Line) -> None:
        if self._fd is None:
            raise RecordWriteFailed(f"{self.path}: the record is closed")
        try:
            _write_all(self._fd, encode(line))
            sync_fd(self._fd)
            self.syncs += 1
        except OSError as exc:
            raise RecordWriteFailed(f"{self.path}: {exc.strerror or exc}") from None

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


class JsonlRecordStore:
    def __init__(self, root: Path, host: str) -> None:
        # The real path: a record's identity names it, and a symlinked parent (macOS /tmp, a linked home)
        # must not make the same file look like a copy.
        self.root = Path(os.path.realpath(root))
        self.host = host

    # --- writing ----------------------------------------------------------------------------------
    def _private(self, path: Path) -> Path:
        self._check_root(RecordWriteFailed)
        try:
            # each folder from the records folder down, existing ones too: an open site folder is refused
            # although the run folder inside it is 0700
            current = ensure_private_dir(self.root, parents=True)
            for part in path.relative_to(self.root).parts:
                current = ensure_private_dir(current / part)
            return current
        except UnsafeDirectory as exc:
            raise RecordWriteFailed(str(exc)) from None
        except OSError as exc:
            raise RecordWriteFailed(f"{path}: cannot be made ({exc.strerror or exc})") from None

    def create(self, site: str, run: str, first: Line) -> JsonlAppender:
        folder = self._private(self.root / site / run)
        stamp = first.at.strftime("%Y%m%dT%H%M%S.%fZ")
        path = folder / f"{stamp}-{os.getpid()}{SUFFIX}"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600)
        except OSError as exc:
            raise RecordWriteFailed(f"{path}: {exc.strerror}") from None
        st = os.fstat(fd)
        start = replace(first, data={**first.data, "path": str(path), "device": st.st_dev, "inode": st.st_ino})
        appender = JsonlAppender(str(path), fd)
        appender.append(start)
        sync_dir(folder)
        return appender

    def open_append(self, path: str) -> JsonlAppender:
        read = self.read(path)
        try:
            fd = os.open(read.path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            raise RecordWriteFailed(f"{path}: {exc.strerror}") from None
        appender = JsonlAppender(read.path, fd)
        size = os.fstat(fd).st_size
        if size and self._last_byte(read.path) != b"\n":
            tail = self._tail_length(read.path)
            try:
                _write_all(fd, b"\n")
            except OSError as exc:
                appender.close()
                raise RecordWriteFailed(f"{path}: {exc.strerror}") from None
            if read.torn_tail:
                # Marks the cut line for every later reader; the record stays append-only.
                appender.append(make(LineType.TORN, read.lines[-1].at if read.lines else _epoch(), bytes=tail))
            else:
                sync_fd(fd)
        return appender

    @staticmethod
    def _last_byte(path: str) -> bytes:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            return f.read(1)

    @staticmethod
    def _tail_length(path: str) -> int:
        data = Path(path).read_bytes()
        return len(data) - (data.rfind(b"\n") + 1)

    # --- reading ----------------------------------------------------------------------------------
    def read(self, path: str) -> RecordRead:
        absolute = _real_parent(path)
        try:
            # Not only your own: older_records may name the records of another runner (seed 002).
            data, st = read_private_stat(Path(absolute), _MAX_RECORD_BYTES, owned=False)
        except FileNotFoundError:
            raise RecordUnreadable("no such record") from None
        except UnsafeFile as exc:
            raise RecordUnreadable(exc.reason) from None
        except OSError as exc:
            raise RecordUnreadable(f"cannot be opened: {exc.strerror}") from None
        lines, torn = parse_lines(data)
        return RecordRead(absolute, tuple(lines), RecordIdentity(self.host, absolute, st.st_dev, st.st_ino), torn)

    def is_newest_in_run_folder(self, path: str) -> bool:
        folder = Path(path).parent
        names = sorted(p.name for p in folder.iterdir() if _is_record_name(p.name))
        return bool(names) and names[-1] == Path(path).name

    def is_in_records_folder(self, path: str) -> bool:
        real = os.path.realpath(path)
        root = os.path.realpath(self.root)
        return os.path.commonpath([real, root]) == root

    def site_records(self, site: str, older: Sequence[str]) -> list[str]:
        self._check_root(RecordUnreadable)
        found: list[str] = []
        own = self.root / site
        if own.is_dir():
            self._check_folder(own, RecordUnreadable)
            found.extend(str(p) for p in sorted(own.rglob(f"*{SUFFIX}")) if _is_record_name(p.name))
        for entry in older:
            p = Path(os.path.realpath(os.path.expanduser(entry)))
            if p.is_dir():
                found.extend(str(q) for q in sorted(p.rglob(f"*{SUFFIX}")) if _is_record_name(q.name))
            else:
                found.append(str(p))  # a missing entry fails when read: the bound must not pass it over
        seen: set[str] = set()
        return [p for p in found if not (p in seen or seen.add(p))]  # type: ignore[func-returns-value]

    # --- older_decisions.jsonl -------------------------------------------------------------------
    def older_decisions(self, site: str) -> list[OlderDecision]:
        path = self.root / site / DECISIONS
        self._check_root(RecordUnreadable)
        try:
            data = read_private(path, _MAX_RECORD_BYTES)
        except FileNotFoundError:
            return []
        except UnsafeFile as exc:
            raise RecordUnreadable(str(exc)) from None
        except OSError as exc:
            raise RecordUnreadable(f"{path}: cannot be read ({exc.strerror or exc})") from None
        decisions = []
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            where = f"{path} line {number}"
            try:
                decisions.append(from_json(loads_object(raw), where))
            except DecodeError as exc:
                message = str(exc)
                raise RecordUnreadable(message if message.startswith(str(path)) else f"{where}: {message}") from None
        return decisions

    def _check_root(self, error: type[Exception]) -> None:
        """The records folder is a folder of yours closed to others (or not there yet): a file in its place,
        or a folder open to others, is one clear line."""
        try:
            st = os.stat(self.root)
        except FileNotFoundError:
            return
        except NotADirectoryError:
            raise error(f"the records folder {self.root} cannot be made: a folder above it is a file") from None
        except OSError as exc:
            raise error(f"the records folder {self.root} cannot be used ({exc.strerror or exc})") from None
        if not stat.S_ISDIR(st.st_mode):
            raise error(f"the records folder {self.root} is not a folder")
        self._check_folder(self.root, error)

    @staticmethod
    def _check_folder(folder: Path, error: type[Exception]) -> None:
        """Yours and closed to others, as qdevices makes it (docs/qdevices/configuration.md), or refused in
        one line naming it: records others may change or replace are no bound to send on."""
        try:
            check_private_dir(folder)
        except UnsafeDirectory as exc:
            raise error(str(exc)) from None

    def add_older_decision(self, site: str, decision: OlderDecision) -> None:
        folder = self._private(self.root / site)
        path = folder / DECISIONS
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            _write_all(fd, dumps_canonical(decision.to_json()))
            sync_fd(fd)
        except OSError as exc:
            raise RecordWriteFailed(f"{path}: {exc.strerror}") from None
        finally:
            os.close(fd)
        sync_dir(folder)


def _real_parent(path: str) -> str:
    """The path with its folders resolved but not its last name: a symlinked record is still refused."""
    absolute = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))


def _is_record_name(name: str) -> bool:
    return name.endswith(SUFFIX) and name != DECISIONS and not name.startswith(".")


def _epoch() -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC)


def parse_lines(data: bytes) -> tuple[list[Line], bool]:
    """Decode a record's bytes. A last line with no newline that does not decode is a torn tail:
    reported, and the rest still reads. A damaged line anywhere else refuses the record, unless a
    "torn" line right after it says a crash cut it (a resume marked it)."""
    if not data:
        raise RecordUnreadable("empty: not a record")
    parts = data.split(b"\n")
    tail = parts.pop()  # b"" when the data ends with a newline
    lines: list[Line] = []
    torn = False
    pending_error: str | None = None
    for number, raw in enumerate(parts, start=1):
        try:
            line = decode(raw, f"line {number}")
        except (DecodeError, UnicodeDecodeError) as exc:
            if pending_error is not None:
                raise RecordUnreadable(pending_error) from None
            pending_error = f"line {number} is damaged ({exc})"
            continue
        if pending_error is not None and line.type is not LineType.TORN:
            raise RecordUnreadable(pending_error)
        pending_error = None
        if line.type is not LineType.TORN:
            lines.append(line)
    if pending_error is not None and not tail:
        raise RecordUnreadable(pending_error)
    if tail:
        try:
            lines.append(decode(tail, f"line {len(parts) + 1}"))
        except (DecodeError, UnicodeDecodeError):
            torn = True
    if not lines or lines[0].type is not LineType.START:
        raise RecordUnreadable("not a record of this app: its first line is not a start line")
    return lines, torn
