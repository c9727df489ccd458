"""POSIX signals as the ``Interrupts`` port: the handler only notes the signal and wakes the waiter.

INT, TERM and HUP are taken unless the process started with them ignored (as under nohup), except
those named ``always`` (dunscaith takes TERM always). A signal never interrupts a request: the use case
sees it between steps.

With a ``drain`` bound (dunscaith's supervisor, seed 000), the first signal also starts a timer that
re-raises it if the drain overruns; a second signal ends the process at once (what is committed stays
committed); after the drain, ``reraise`` ends the process by the signal, so the shell sees 128+n.
Without one (qdevices, seed 002), later signals only wake the waiter: the call ends with its stop line.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class SignalInterrupts:
    TERM = frozenset({signal.SIGTERM})

    def __init__(self, *, always: frozenset[int] = frozenset(), drain: float | None = None) -> None:
        self._always = always
        self._drain = drain
        self._stop = threading.Event()
        self._old: dict[int, Any] = {}
        self.signum: int | None = None

    def install(self) -> SignalInterrupts:
        for signum in HANDLED:
            current = signal.getsignal(signum)
            if current == signal.SIG_IGN and signum not in self._always:
                continue  # ignored at start (nohup): it stays ignored
            self._old[signum] = current
            signal.signal(signum, self._on_signal)
        return self

    def restore(self) -> None:
        """Put back the handlers ``install`` replaced."""
        for signum, old in self._old.items():
            signal.signal(signum, old)
        self._old.clear()

    def pending(self) -> str | None:
        return None if self.signum is None else signal.Signals(self.signum).name

    def wait(self, seconds: float) -> str | None:
        if seconds > 0 and self.signum is None:
            self._stop.wait(seconds)
            if self.signum is None:
                # A wake that lands after this clear is for a change made before it: the caller looks
                # at everything once this returns, so nothing it asked to be woken for is missed.
                self._stop.clear()
        return self.pending()

    def wake(self) -> None:
        self._stop.set()

    def reraise(self) -> None:
        """End the process by the signal that started the drain (after the lock is released)."""
        if self.signum is not None:
            _die_by(self.signum)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is not None:
            if self._drain is not None:
                _die_by(signum)  # a second signal: at once, keeping what is committed
            return
        self.signum = signum
        self._stop.set()
        if self._drain is not None:
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
