"""A terminated worker's end read from /proc before its wrapper writes the outcome (``group.py``): only
once its leader and every other member of its process group are gone, with the leader's own status."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time

import pytest

from dunscaith.adapters.scheduler.local.group import GroupEnd, group_ended

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")


def _await_zombie(pid: int) -> None:
    """Until the leader has exited and is kept unreaped (as the wrapper keeps it): its pidfd says so."""
    fd = os.pidfd_open(pid)
    try:
        assert select.select([fd], [], [], 30)[0], "the leader did not exit"
    finally:
        os.close(fd)


def test_a_leader_ended_by_term_with_nothing_left_in_its_group_is_ended_with_its_signal() -> None:
    leader = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        assert group_ended(leader.pid, leader.pid) is None  # running
        os.killpg(leader.pid, signal.SIGTERM)
        _await_zombie(leader.pid)
        assert group_ended(leader.pid, leader.pid) == GroupEnd(None, signal.SIGTERM)
    finally:
        leader.kill()
        leader.wait()


def test_a_member_left_in_the_group_keeps_it_running_after_its_leader_ended() -> None:
    # the leader leaves a child in its group that ignores TERM, then ends
    leader = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 300 & exit 3"], start_new_session=True)
    try:
        _await_zombie(leader.pid)
        assert group_ended(leader.pid, leader.pid) is None
        os.killpg(leader.pid, signal.SIGKILL)  # the grace's KILL
        deadline = time.monotonic() + 30  # the member is init's child now: nothing to await but /proc
        while group_ended(leader.pid, leader.pid) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert group_ended(leader.pid, leader.pid) == GroupEnd(3, None)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader.pid, signal.SIGKILL)
        leader.wait()
