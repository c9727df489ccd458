"""Ctrl-C, SIGTERM and SIGHUP end a live call with a stop line; they never interrupt a request.

The handler only notes the signal and wakes the wait between polls (a self-pipe), so a request that
may make a job is always answered and recorded before the call stops. A signal set to ignore when
the process started stays ignored, so ``nohup`` works.
"""

from __future__ import annotations

import os
import select
import signal
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class SignalInterrupts:
    def __init__(self) -> None:
        self._got: str | None = None
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)
        self._old: dict[int, Any] = {}

    def install(self) -> SignalInterrupts:
        for sig in STOP_SIGNALS:
            current = signal.getsignal(sig)
            if current == signal.SIG_IGN:
                continue
            self._old[sig] = current
            signal.signal(sig, self._handler)
        return self

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self._got is None:
            self._got = signal.Signals(signum).name
        try:
            os.write(self._w, b"!")
        except OSError:
            pass

    def pending(self) -> str | None:
        return self._got

    def wait(self, seconds: float) -> str | None:
        if self._got is None and seconds > 0:
            select.select([self._r], [], [], seconds)
        return self._got

    def restore(self) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
