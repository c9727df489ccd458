"""Signals drain the supervisor (seed 000): the handler lives here, the drain in the service.

TERM always; INT and HUP unless the process started with them ignored (as under nohup). The first
signal sets the cancellation the supervisor polls between steps; if the drain overruns
``supervise.drain`` the signal is re-raised from a timer (what is committed stays committed). After
a drain the signal is re-raised with its default action, so the shell sees 128+n. A second signal
ends the process at once. A signal never cancels a job.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType

HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class SignalDrain:
    """The supervisor's Cancellation, set by the first signal."""

    def __init__(self, drain_seconds: float) -> None:
        self._drain = drain_seconds
        self._stop = threading.Event()
        self.signum: int | None = None

    def install(self) -> None:
        for signum in HANDLED:
            if signum != signal.SIGTERM and signal.getsignal(signum) == signal.SIG_IGN:
                continue  # ignored at start (nohup): it stays ignored
            signal.signal(signum, self._on_signal)

    def requested(self) -> bool:
        return self._stop.is_set()

    def wait(self, seconds: float) -> bool:
        return self._stop.wait(seconds)

    def reraise(self) -> None:
        """End the process by the signal that started the drain (after the lock is released)."""
        if self.signum is not None:
            _die_by(self.signum)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is not None:
            _die_by(signum)  # a second signal: at once, keeping what is committed
        self.signum = signum
        self._stop.set()
        timer = threading.Timer(self._drain, _die_by, args=(signum,))
        timer.daemon = True
        timer.start()


def _die_by(signum: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
