"""Has the group leader exited? Asked without reaping it (waitid with WNOWAIT).

Keeping the leader a zombie keeps its pid, and so its process group id, from being reused while a
signal may still go to the group. Linux Python has ``os.waitid``; CPython on macOS exposes it only
from 3.13 (python/cpython#113536), although Darwin's libc has had ``waitid(2)`` for long, so older
Pythons there call it through ctypes. The macOS path is written to Darwin's headers but is not run by
this project's tests (they run on Linux).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def _os_waitid(pid: int) -> bool:
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _darwin_waitid() -> Callable[[int], bool]:  # pragma: no cover - macOS with Python < 3.13 only
    import ctypes  # here: ctypes.util alone costs the wrapper's start-up ~4 ms where os.waitid exists
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    p_pid, wnohang, wexited, wnowait = 1, 0x01, 0x04, 0x20  # <sys/wait.h> on Darwin
    siginfo_size, si_pid_offset = 104, 12  # siginfo_t: si_signo, si_errno, si_code, then si_pid

    def exited(pid: int) -> bool:
        info = ctypes.create_string_buffer(siginfo_size)  # zeroed: si_pid stays 0 when nothing is ready
        if libc.waitid(p_pid, pid, info, wexited | wnohang | wnowait) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        return int.from_bytes(info.raw[si_pid_offset:si_pid_offset + 4], sys.byteorder, signed=True) != 0

    return exited


leader_exited: Callable[[int], bool] = _os_waitid if hasattr(os, "waitid") else _darwin_waitid()
