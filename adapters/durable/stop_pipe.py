"""The stop pipe of a watch's thread: the thread waits in ``select`` on its read end as well as on what it
watches, and closing the watch writes one byte to its write end, then waits for the thread to end.

Shared by every watch that runs a thread of its own (the SQLite and PostgreSQL append watches, the local
scheduler's object watch).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading


def stop_thread(stop_w: int, thread: threading.Thread) -> bool:
    """Tell ``thread`` to end through the stop pipe's write end ``stop_w`` and wait until it has; False (and
    nothing done) when ``stop_w`` is closed already (below 0): the watch was closed before."""
    if stop_w < 0:
        return False
    with contextlib.suppress(OSError):
        os.write(stop_w, b"x")
    thread.join()
    return True


def close_fds(fds: Iterable[int]) -> None:
    """Close each descriptor that is open (0 or above), whatever closing one of them says."""
    for fd in fds:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
