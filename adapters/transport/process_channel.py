"""A Channel over a client process's pipes (the OpenSSH client, or a local shell)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
from collections.abc import Callable

from dunscaith.domain.model.forwarding.evidence import SessionEvidence

STDERR_KEEP = 64 * 1024  # the tail of the client's stderr kept for the evidence
READ = 64 * 1024


class ProcessChannel:
    """The remote command's stdin and stdout are the client's; its stderr is kept (a bounded tail)."""

    def __init__(self, process: subprocess.Popen[bytes], evidence: Callable[[int | None, str], SessionEvidence],
                 cleanup: Callable[[], None] = lambda: None) -> None:
        self.process = process
        self._evidence = evidence
        self._cleanup = cleanup
        self._stderr = bytearray()
        self._stderr_lock = threading.Lock()
        self._aborted = False
        self._reader = threading.Thread(target=self._read_stderr, name="client-stderr", daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        stream = self.process.stderr
        if stream is None:
            return
        fd = stream.fileno()
        while True:
            try:
                chunk = os.read(fd, READ)
            except OSError:
                return
            if not chunk:
                return
            with self._stderr_lock:
                self._stderr += chunk
                del self._stderr[:-STDERR_KEEP]

    def stderr_text(self) -> str:
        with self._stderr_lock:
            return self._stderr.decode("utf-8", "replace")

    def send(self, data: bytes) -> bool:
        stdin = self.process.stdin
        if stdin is None or stdin.closed:
            return stdin is None  # a terminal session: the terminal is its stdin
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(stdin.fileno(), view):]
            return True
        except OSError:
            return False

    def receive(self, timeout: float) -> bytes | None:
        stdout = self.process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout.fileno()], [], [], max(0.0, timeout))
        if not ready:
            return None
        try:
            return os.read(stdout.fileno(), READ)
        except OSError:
            return b""

    def close_input(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(OSError):
                self.process.stdin.close()

    def abort(self) -> None:
        self._aborted = True
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def finish(self, timeout: float) -> SessionEvidence:
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.abort()
        self.close_input()
        self.process.wait()
        # A ControlPersist master may keep the client's stderr open for ever: do not wait for its end.
        self._reader.join(timeout=0.5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        code = self.process.returncode
        try:
            return self._evidence(None if self._aborted or code < 0 else code, self.stderr_text())
        finally:
            self._cleanup()
