"""With --json, a forwarding failure prints the error object on stdout (docs/json.md), its line on stderr and
its exit code (issue 22, item 17): over the sshd hosts, with the owning host's link cut."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.forwarding.conftest import requested
from tests.infra.ssh_hosts import NOISE, SshHosts, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd]
REQUEST = re.compile(r"[0-9a-f]{32}")


def document(stdout: str) -> Any:
    """The one JSON document on stdout (the test user's startup-file line is the outer ssh's, not ours)."""
    return json.loads("".join(line for line in stdout.splitlines() if line.strip() != NOISE))


@pytest.fixture
def far_job(hosts: SshHosts) -> Iterator[str]:
    """A job whose pointer names login3, whose link is down: nothing reaches it."""
    job = "far-json"
    pointer = {"version": 1, "job": job, "host": "login3", "record_root": "/var/tmp/x", "root_machine_id": "0" * 32,
               "root_hostname": "login3", "binary": hosts.dunscaith, "cluster": "local", "adapter": "local",
               "state": "running", "state_at": "2026-01-01T00:00:00+00:00", "supervised_at": None}
    path = hosts.user.home / ".config" / "dunscaith" / "jobs" / job
    # the user's own folders, as dunscaith makes them (one of root's would keep submit's pointers out)
    subprocess.run(["runuser", "-u", hosts.user.name, "--", "mkdir", "-p", "-m", "700", str(path.parent)], check=True)
    path.write_text(json.dumps(pointer))
    shutil.chown(path, hosts.user.name, hosts.user.name)
    hosts.cut_link("login3")
    try:
        yield job
    finally:
        hosts.restore_link("login3")
        path.unlink()


@pytest.mark.parametrize("transport", ["openssh", "paramiko"])
@pytest.mark.parametrize("command", ["status", "hold"])
def test_a_command_for_a_job_of_an_unreachable_host_prints_the_error_object_on_stdout(
        hosts: SshHosts, far_job: str, command: str, transport: str) -> None:
    done = hosts.ssh("login2", f"DUNSCAITH_FORWARDING__TRANSPORT={transport} DUNSCAITH_FORWARDING__CONNECT_TIMEOUT=2 "
                               f"{hosts.dunscaith} {command} {far_job} --json")
    assert done.returncode == 2, done.stderr
    answer = document(done.stdout)
    assert answer["error"]["code"] == "never-ran" and answer["error"]["exit_code"] == 2
    assert answer["error"]["message"].startswith("could not connect to login3")
    assert answer["error"]["message"].endswith("nothing ran on login3. Run the command again when it is reachable")
    assert answer["host"] == "login3" and REQUEST.fullmatch(answer["request"])
    assert f"dunscaith: {answer['error']['message']}" in done.stderr.splitlines()


def test_a_forwarded_hold_whose_host_is_cut_off_after_it_was_sent_prints_may_have_run_on_stdout(
        hosts: SshHosts, busy_job: str) -> None:
    job = busy_job
    hold = hosts.popen_text("login2", f"DUNSCAITH_FORWARDING__HEARTBEAT=0.5 {hosts.dunscaith} hold {job} --json",
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: requested(hosts, job, "hold"), 60, "the forwarded hold to reach login1's record")
        hosts.cut_link("login1")
        try:
            out, err = hold.communicate(timeout=60)
        finally:
            hosts.restore_link("login1")
        assert hold.returncode == 6, err
        answer = document(out)
        assert answer["error"]["code"] == "may-have-run" and answer["error"]["exit_code"] == 6
        assert "MAY HAVE RUN" in answer["error"]["message"]
        assert answer["host"] == "login1"
        assert f"dunscaith forwarded {answer['request']}" in answer["error"]["message"]
        assert f"dunscaith: {answer['error']['message']}" in err.splitlines()
    finally:
        if hold.poll() is None:
            hold.kill()
