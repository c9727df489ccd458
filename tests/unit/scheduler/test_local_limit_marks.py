"""How the local scheduler reads its watchdog's marks (exec_shim.py) into an ended object's state: the
memory mark makes it out of memory (the figures shown when they read), the time mark a timeout; an object
that ended by itself (no signal) or without a mark is left as it ended; and how the watchdog reads a
process's memory from /proc/<pid>/status."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.local import exec_shim
from dunscaith.adapters.scheduler.local.layout import OOM_MARK, TIME_LIMIT_MARK
from dunscaith.adapters.scheduler.local.scheduler import _limit_reached
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import ObjectState, ObjectView

KILLED = ObjectView(object_id=ObjectId("o"), name=JobId("j"), nonce=Nonce("n"), state=ObjectState.FAILED,
                    owner="me", signal=signal.SIGKILL)


def test_the_layout_and_the_shim_name_the_same_marks() -> None:
    assert (exec_shim.OOM_MARK, exec_shim.TIME_LIMIT_MARK) == (OOM_MARK, TIME_LIMIT_MARK)


@pytest.mark.parametrize(("mark", "reason"), [
    (b"315536 102400\n", "its memory limit was passed (308M resident, its limit 100M): killed (SIGKILL)"),
    (b"", "its memory limit was passed: killed (SIGKILL)"),
    (b"lots 100\n", "its memory limit was passed: killed (SIGKILL)"),
])
def test_the_memory_mark_is_out_of_memory(tmp_path: Path, mark: bytes, reason: str) -> None:
    (tmp_path / OOM_MARK).write_bytes(mark)
    (tmp_path / TIME_LIMIT_MARK).write_text("5\n")  # never both; were they, the kill was the memory's
    seen = _limit_reached(KILLED, tmp_path)
    assert (seen.state, seen.signal, seen.reason) == (ObjectState.OUT_OF_MEMORY, signal.SIGKILL, reason)


def test_the_time_mark_is_a_timeout_and_no_mark_leaves_the_end_as_it_is(tmp_path: Path) -> None:
    assert _limit_reached(KILLED, tmp_path) == KILLED
    (tmp_path / TIME_LIMIT_MARK).write_text("5\n")
    assert _limit_reached(KILLED, tmp_path).state is ObjectState.TIMEOUT


@pytest.mark.parametrize(("field", "kib"), [(b"\nVmRSS:", 2048), (b"\nVmHWM:", 4096), (b"\nVmSwap:", 0)])
def test_the_watchdog_reads_a_status_field_in_kib(field: bytes, kib: int) -> None:
    status = b"Name:\tpython3\nVmPeak:\t 9999 kB\nVmHWM:\t    4096 kB\nVmRSS:\t    2048 kB\nThreads:\t1\n"
    assert exec_shim._kib(status, field) == kib
