"""The caller's own stdin, stdout and stderr, as the forwarding use case uses them."""

from __future__ import annotations

import contextlib
import os
import select


class StdioStreams:
    """``raw_terminal``: ssh was handed the terminal (-tt) and put it in raw mode, where a newline no
    longer returns the carriage: output to a terminal then gets its ``\r`` back."""

    def __init__(self, stdin: int = 0, stdout: int = 1, stderr: int = 2, raw_terminal: bool = False) -> None:
        self.fds = (stdin, stdout, stderr)
        self._ended = False
        self._raw = raw_terminal

    def _write(self, fd: int, data: bytes) -> None:
        if self._raw and os.isatty(fd):
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        view = memoryview(data)
        with contextlib.suppress(OSError):  # a reader that went away loses output, never the verdict
            while view:
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:
                    select.select([], [fd], [])

    def out(self, data: bytes) -> None:
        self._write(self.fds[1], data)

    def err(self, data: bytes) -> None:
        self._write(self.fds[2], data)

    def read_input(self) -> bytes | None:
        if self._ended:
            return b""
        try:
            ready, _, _ = select.select([self.fds[0]], [], [], 0)
        except (OSError, ValueError):  # no stdin at all: an ended one
            self._ended = True
            return b""
        if not ready:
            return None
        try:
            data = os.read(self.fds[0], 65536)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if not data:
            self._ended = True
        return data

    def at_terminal(self) -> bool:
        return os.isatty(self.fds[0]) and os.isatty(self.fds[2])
