"""Whether a process recorded by pid (and, where known, its kernel start time) is still that process."""

from __future__ import annotations

import os
from pathlib import Path


def process_start(pid: int) -> str:
    """The kernel's start time of a process (Linux: ticks since boot), "" where it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def pid_alive(pid: int, start: str = "") -> bool:
    """True while ``pid`` names a live process; with ``start`` (from ``process_start``), that same process.

    A process of another user is alive too (EPERM). A pid the kernel has reused for another process
    is not, when both start times can be read: a recorded pid alone cannot tell the two apart.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    now_start = process_start(pid)
    return not (start and now_start and now_start != start)
