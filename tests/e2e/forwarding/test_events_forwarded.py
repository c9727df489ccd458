"""``dunscaith events JOB`` typed on login2 for a job recorded on login1: forwarded there, the same timeline
(real sshd hosts, the real CLI as the user)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.forwarding.test_jobs_across_hosts import out
from tests.infra.ssh_hosts import SshHosts

pytestmark = [pytest.mark.slow, pytest.mark.sshd]


def test_events_from_login2_is_the_timeline_login1_shows(hosts: SshHosts, tmp_path: Path) -> None:
    ds = hosts.dunscaith
    job = f"ev-{tmp_path.name[-6:]}"
    done = hosts.ssh("login1", f"{ds} submit --name {job} -- /bin/sh -c 'exit 3'")
    assert done.returncode == 1, done.stderr
    here = hosts.ssh("login1", f"{ds} events {job}")
    there = hosts.ssh("login2", f"{ds} events {job}")
    assert there.returncode == here.returncode == 0, there.stderr
    assert out(there) == out(here)
    lines = out(there).splitlines()
    assert lines[0].startswith(f"job {job}: cluster local (local), submitted on host login1, recorded in ")
    assert "submit@login1" in lines[1] and lines[-1].endswith("supervisor@login1  settled: nothing outstanding")
    as_json = hosts.ssh("login2", f"{ds} events --json {job}")
    objects = [json.loads(line) for line in out(as_json).splitlines()]
    assert objects[0]["host"] == "login1" and objects[-1]["kind"] == "settled"
