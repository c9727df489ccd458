"""A job's output files, read for the terminal: the last lines of one, a whole one, or several followed
while they grow (``submit --follow``, ``logs --follow``). Display only: nothing here writes a file."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import suppress

Sink = Callable[[str], None]  # receives text as it arrives, in pieces that end at a newline when they can


def last_lines(path: str, count: int, limit: int = 64 * 1024) -> list[str]:
    """The last ``count`` lines of ``path`` (from its last ``limit`` bytes); [] when it does not read."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-count:]


def tail(path: str, count: int, block: int = 64 * 1024, *, limit: int | None = None) -> tuple[bytes, int]:
    """The last ``count`` lines of ``path`` (``tail -n``: a last line without its newline counts), read
    backwards a block at a time, and the file's size then; OSError when it cannot be opened. ``limit``:
    read no more than its last ``limit`` bytes (a line cut there is dropped unless it is the only one)."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        if count <= 0:
            return b"", end
        floor = 0 if limit is None else max(0, end - limit)
        pos, data = end, b""
        while pos > floor and data.count(b"\n") <= count:
            step = min(block, pos - floor)
            pos -= step
            f.seek(pos)
            data = f.read(step) + data
    parts = data.split(b"\n")
    if pos > 0 and sum(1 for part in parts if part) > 1:  # the first piece may be a line's end only
        parts = parts[1:]
    lines = [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    return b"".join(lines[-count:]), end


def chunks(path: str, size: int = 64 * 1024) -> Iterator[bytes]:
    """The whole file, in pieces (OSError when it cannot be opened)."""
    with open(path, "rb") as f:
        while piece := f.read(size):
            yield piece


class _Tail:
    def __init__(self, path: str, sink: Sink, start: int = 0) -> None:
        self.path = path
        self.sink = sink
        self.offset = start
        self.partial = b""

    def read(self, final: bool) -> bool:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:  # not there yet (Slurm writes it when the job starts)
            return False
        self.offset += len(data)
        data = self.partial + data
        cut = data.rfind(b"\n") + 1
        whole, self.partial = (data, b"") if final else (data[:cut], data[cut:])
        if whole:
            with suppress(Exception):  # a closed terminal never stops the follower's caller
                self.sink(whole.decode(errors="replace"))
        return bool(whole)


class Follower:
    """Copies what is appended to each path into its sink, from a background thread, until ``stop``
    (which reads what is left, a last line without its newline included)."""

    def __init__(self, every: float = 0.25) -> None:
        self._tails: list[_Tail] = []
        self._every = every
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def add(self, path: str, sink: Sink, start: int = 0) -> None:
        with self._lock:
            if any(t.path == path for t in self._tails):
                return
            self._tails.append(_Tail(path, sink, start))
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="dunscaith-follow", daemon=True)
            self._thread.start()

    @property
    def following(self) -> bool:
        return bool(self._tails)

    def _pass(self, final: bool) -> bool:
        with self._lock:
            return any([tail.read(final) for tail in self._tails])

    def _run(self) -> None:
        while not self._stopping.wait(self._every):
            self._pass(False)

    def poll(self) -> bool:
        """One read of every path now (``logs --follow`` runs its own loop); whether anything came."""
        return self._pass(False)

    def drain(self) -> None:
        """Read every path to its end now, a last line without its newline included: the job has
        ended, so what it wrote comes before the outcome line that follows."""
        self._pass(True)

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._pass(True)


def remove_folder(folder: str, under: str) -> bool:
    """Remove ``folder``, a job's output folder, only if it is a direct child of ``under``, a real
    directory (not a link) and this user's own; whether it was removed. ``prune --outputs`` only."""
    import shutil
    import stat

    path = os.path.abspath(folder)
    if os.path.dirname(path) != os.path.abspath(under):
        return False
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        return False
    shutil.rmtree(path)  # rmtree never follows a link inside the folder
    return True


class OutputFiles:
    """The functions above as one object for the container (entrypoints reach adapters only there)."""

    last_lines = staticmethod(last_lines)
    tail = staticmethod(tail)
    chunks = staticmethod(chunks)
    remove_folder = staticmethod(remove_folder)

    @staticmethod
    def follower(every: float = 0.25) -> Follower:
        return Follower(every)
