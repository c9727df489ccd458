"""``EnvCrashPoints``: the crash-point seam's real adapter.

When ``DUNSCAITH_TEST_CRASH_AT`` names a point, the process kills itself with SIGKILL the moment it
reaches that point: no handler, no flush, no lock release but the kernel's, exactly like a power cut
of the process. With the variable unset (always, outside the crash-point sweep) it does nothing.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping

VARIABLE = "DUNSCAITH_TEST_CRASH_AT"


class EnvCrashPoints:
    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        target = env.get(VARIABLE, "")
        # "point" or "point#n": die the n-th time the point is reached (1 when not given)
        name, _, nth = target.partition("#")
        self._target = name
        self._left = int(nth) if nth.isdigit() else 1

    def reached(self, point: str) -> None:
        if point != self._target:
            return
        self._left -= 1
        if self._left <= 0:
            os.kill(os.getpid(), signal.SIGKILL)
