"""The one signals adapter, with real signals sent to this process: what each mode takes and keeps."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from dunscaith.adapters.signals.posix import SignalInterrupts


@pytest.fixture(autouse=True)
def _handlers_back() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


def test_a_signal_is_seen_by_name_and_wakes_the_wait_and_a_second_one_does_not_replace_it() -> None:
    interrupts = SignalInterrupts().install()
    assert interrupts.pending() is None and interrupts.wait(0) is None
    os.kill(os.getpid(), signal.SIGTERM)
    os.kill(os.getpid(), signal.SIGINT)  # no drain bound: a later signal only wakes the waiter
    assert interrupts.wait(60) == "SIGTERM" and interrupts.pending() == "SIGTERM"


def test_a_signal_ignored_at_start_stays_ignored() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    interrupts = SignalInterrupts().install()
    os.kill(os.getpid(), signal.SIGHUP)
    assert interrupts.pending() is None
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


def test_the_supervisor_takes_term_even_when_it_was_ignored_at_start() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    interrupts = SignalInterrupts(always=SignalInterrupts.TERM, drain=60).install()
    os.kill(os.getpid(), signal.SIGHUP)  # nohup: stays ignored
    assert interrupts.pending() is None
    assert signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN  # TERM is taken all the same
    interrupts.restore()  # before TERM: the drain mode's timer would end this test process
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


def test_restore_puts_back_the_handlers_it_replaced() -> None:
    def mine(signum: int, frame: object) -> None:
        pass

    signal.signal(signal.SIGINT, mine)
    interrupts = SignalInterrupts().install()
    assert signal.getsignal(signal.SIGINT) is not mine
    interrupts.restore()
    assert signal.getsignal(signal.SIGINT) is mine
