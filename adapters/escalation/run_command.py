"""The user's delivery command (escalations.command, notify.command): one JSON document on stdin, exit 0 in time.

It runs in a session of its own, never through a shell, its output discarded: a command that hangs is killed
with everything it started when its time is up, so it holds up a supervisor for at most ``timeout`` seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence

from dunscaith.ports.escalation_delivery import DeliveryFailed


class CommandDelivery:
    """A delivery to a configured command (an argv, none when empty) within ``timeout`` seconds."""

    def __init__(self, argv: Sequence[str] | None, timeout: float = 10.0) -> None:
        self._argv = list(argv or ())
        self._timeout = timeout

    @property
    def configured(self) -> bool:
        return bool(self._argv)

    def _run(self, payload: bytes) -> None:
        run_with_input(self._argv, payload, self._timeout)


def run_with_input(argv: Sequence[str], payload: bytes, timeout: float) -> None:
    """Run ``argv`` with ``payload`` on stdin, in its own session; DeliveryFailed unless it exits 0 in time."""
    try:
        child = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise DeliveryFailed(f"{argv[0]}: {exc.strerror or exc}") from None
    try:
        child.communicate(payload, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        raise DeliveryFailed(f"{argv[0]} did not finish within {timeout:g} s (killed)") from None
    except BaseException:
        _kill_group(child)
        raise
    if child.returncode != 0:
        raise DeliveryFailed(f"{argv[0]} exited {child.returncode}")


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        child.kill()
    child.wait()
