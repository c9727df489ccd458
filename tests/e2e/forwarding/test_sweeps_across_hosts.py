"""A sweep submitted on login1, and its commands typed on login2 (real sshd hosts, the real CLI as the user).

Each command on the sweep or on one element is forwarded to login1, where the elements' records are, and
acts there as it would on login1 itself; nothing is recorded on login2. A supervisor killed on login1 is
replaced by ``supervise NAME`` typed on login2, which runs on login1 and never runs an element twice.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.e2e.forwarding.test_jobs_across_hosts import out
from tests.infra.ssh_hosts import SshHosts, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd]


def _no_store_on_login2(hosts: SshHosts) -> None:
    """Nothing of the sweep is recorded on login2, and no record store was even made there: a sweep's name
    is found from its elements' pointers before a store would be made (no test submits on login2)."""
    assert hosts.ssh("login2", f"ls /var/tmp/dunscaith-{hosts.user.name}/records.db").returncode != 0


def _waiting_sweep(hosts: SshHosts, name: str, go: Path, ran: Path, size: int) -> subprocess.Popen[bytes]:
    """``submit`` of a sweep on login1 whose elements each note their index in ``ran``, then wait for ``go``."""
    command = f"/bin/sh -c 'echo {{}} >> {ran}; while [ ! -e {go} ]; do sleep 0.1; done'"
    return hosts.popen("login1", f"{hosts.dunscaith} submit --name {name} --array 1-{size} -- {command}",
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _ran(ran: Path) -> Counter[str]:
    return Counter(ran.read_text().split()) if ran.exists() else Counter()


def _attendances(hosts: SshHosts, name: str) -> list[dict[str, str]]:
    """The sweep supervisors' attendances of ``name`` in the shared home (sweep_attendance.py)."""
    folder = hosts.user.home / ".config" / "dunscaith" / "jobs" / ".attending"
    return [json.loads(path.read_text()) for path in sorted(folder.glob(f"{name}@*"))] if folder.exists() else []


def _pointer(hosts: SshHosts, job: str) -> dict[str, str]:
    return dict(json.loads((hosts.user.home / ".config" / "dunscaith" / "jobs" / job).read_text()))


def test_status_list_cancel_and_supervise_of_a_sweep_from_login2_act_on_login1(hosts: SshHosts,
                                                                              tmp_path: Path) -> None:
    ds = hosts.dunscaith
    name = f"sw-{tmp_path.name[-6:]}"
    go, ran = hosts.user.home / f"go-{name}", hosts.user.home / f"ran-{name}"
    submit = _waiting_sweep(hosts, name, go, ran, 3)
    try:
        wait_for(lambda: sum(_ran(ran).values()) == 3, 60, "every element to run on login1")
        # status NAME: the same counts as on login1 itself
        here = json.loads(out(hosts.ssh("login1", f"{ds} status {name} --json")))
        there_done = hosts.ssh("login2", f"{ds} status {name} --json")
        assert there_done.returncode == 0, there_done.stderr
        there = json.loads(out(there_done))
        assert there["sweep"] == name and there["counts"] == here["counts"]
        assert [e["job"] for e in there["elements"]] == [f"{name}-1", f"{name}-2", f"{name}-3"]
        # an element is an ordinary job there too
        element = hosts.ssh("login2", f"{ds} status {name}-2 --json")
        assert element.returncode == 0 and json.loads(out(element))["state"] == "running"
        # list: the sweep as one row, its elements with --expand
        listed = hosts.ssh("login2", f"{ds} list")
        assert listed.returncode == 0, listed.stderr
        assert f"{name}  sweep of 3: 3 running  on host login1 (from its elements' pointers" in out(listed)
        assert f"{name}-2" not in out(listed)
        expanded = hosts.ssh("login2", f"{ds} list --expand")
        assert f"{name}-2" in out(expanded)
        # supervise NAME: the sweep's live supervisor on login1 holds it: refused there, nothing taken
        again = hosts.ssh("login2", f"{ds} supervise {name}")
        assert again.returncode == 2, again.stdout + again.stderr
        assert f"sweep {name} is supervised by another live process" in again.stderr
        # cancel one element: confirmed by the supervisor on login1
        cancel = hosts.ssh("login2", f"{ds} cancel {name}-2")
        assert cancel.returncode == 0, cancel.stdout + cancel.stderr
        go.touch()
        assert submit.wait(120) == 1  # one element cancelled: not every element succeeded
        final = json.loads(out(hosts.ssh("login2", f"{ds} status {name} --json")))
        states = {e["job"]: e["state"] for e in final["elements"]}
        assert states == {f"{name}-1": "succeeded", f"{name}-2": "cancelled", f"{name}-3": "succeeded"}
        assert _ran(ran) == Counter({"1": 1, "2": 1, "3": 1})
        # nothing of the sweep is recorded on login2: its status there says where it is
        assert "runs there" in hosts.ssh("login2", f"{ds} status {name}").stderr
        _no_store_on_login2(hosts)
    finally:
        go.touch()
        if submit.poll() is None:
            submit.kill()


def test_a_sweep_whose_supervisor_was_killed_is_carried_on_from_login2_and_no_element_runs_twice(
        hosts: SshHosts, tmp_path: Path) -> None:
    ds = hosts.dunscaith
    name = f"sk-{tmp_path.name[-6:]}"
    go, ran = hosts.user.home / f"go-{name}", hosts.user.home / f"ran-{name}"
    submit = _waiting_sweep(hosts, name, go, ran, 4)
    supervise = None
    try:
        wait_for(lambda: sum(_ran(ran).values()) == 4, 60, "every element to run on login1")
        # While it runs, its one attendance keeps every element attended on login2, long after each element's
        # own supervised-at (written once, as it began) would have called it Unattended: 2 x 10 poll intervals
        began = _pointer(hosts, f"{name}-1")["supervised_at"]
        first = datetime.fromisoformat(began)
        wait_for(lambda: any(datetime.fromisoformat(a["supervised_at"]) - first > timedelta(seconds=12)
                             for a in _attendances(hosts, name)), 60, "the attendance to outlive the pointers")
        (attendance,) = _attendances(hosts, name)
        assert attendance["indices"] == "1-4" and attendance["root_hostname"] == "login1"
        assert _pointer(hosts, f"{name}-1")["supervised_at"] == began  # no pointer is rewritten for it
        live = hosts.ssh("login2", f"{ds} list")
        about = [line for line in (live.stdout + live.stderr).splitlines() if name in line]  # other tests' jobs too
        assert live.returncode == 0 and about, live.stdout + live.stderr
        assert not any("Unattended" in line for line in about), live.stdout + live.stderr
        hosts.inside("login1", "pkill", "-KILL", "-f", f"dunscaith submit --name {name}", check=False)
        submit.wait(60)
        wait_for(lambda: "Unattended" in hosts.ssh("login2", f"{ds} status {name}").stdout
                 + hosts.ssh("login2", f"{ds} status {name}").stderr, 60, "the sweep to be Unattended")
        # login2's own notice, judged from the elements' pointers (no supervisor seen for 10 poll intervals):
        # the sweep in one line, naming the host it runs on, never one line per element
        notice = (f"sweep {name} on host login1: 4 elements look Unattended (their pointers: no supervisor seen "
                  f"recently); reattach with: dunscaith supervise {name} (it runs on login1)")
        wait_for(lambda: notice in hosts.ssh("login2", f"{ds} list").stderr, 60, "login2's notice of the sweep")
        assert f"job {name}-" not in hosts.ssh("login2", f"{ds} list").stderr
        supervise = hosts.popen("login2", f"{ds} supervise {name}", stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.set_blocking(supervise.stdout.fileno(), False)  # type: ignore[union-attr]
        seen = bytearray()

        def reattached() -> bool:
            seen.extend(supervise.stdout.read() or b"")  # type: ignore[union-attr]
            return b"running" in seen

        wait_for(reattached, 60, "the forwarded supervise to take the elements on login1")
        go.touch()
        assert supervise.wait(120) == 0, bytes(seen) + supervise.stderr.read()  # type: ignore[union-attr]
        final = json.loads(out(hosts.ssh("login2", f"{ds} status {name} --json")))
        assert {e["state"] for e in final["elements"]} == {"succeeded"}
        assert _ran(ran) == Counter({"1": 1, "2": 1, "3": 1, "4": 1})
        assert _attendances(hosts, name) == []  # the killed one's removed as stale, the last one's at its end
        _no_store_on_login2(hosts)
    finally:
        go.touch()
        for process in (submit, supervise):
            if process is not None and process.poll() is None:
                process.kill()
