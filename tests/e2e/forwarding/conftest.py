"""Fixtures of the forwarding e2e tests on the sshd hosts."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra.forwarding_support import hosts_or_skip
from tests.infra.ssh_hosts import NOISE, SshHosts, wait_for


@pytest.fixture(scope="module")
def hosts() -> SshHosts:
    return hosts_or_skip()


def requested(hosts: SshHosts, job: str, action: str) -> bool:
    """``action`` is a request in the record of ``job`` on login1 (as its own status says there)."""
    done = hosts.ssh("login1", f"{hosts.dunscaith} status {job} --json")
    text = "".join(line for line in done.stdout.splitlines() if line.strip() != NOISE)
    return done.returncode == 0 and any(r["action"] == action for r in json.loads(text)["requests"])


@pytest.fixture
def busy_job(hosts: SshHosts, tmp_path: Path) -> Iterator[str]:
    """A job running on login1 whose supervisor is stopped: it holds the lock and answers no request."""
    job = f"b-{tmp_path.name[-6:]}"
    go = hosts.user.home / f"go-{job}"
    submit = hosts.popen("login1", f"{hosts.dunscaith} submit --name {job} -- /bin/sh -c "
                                   f"'while [ ! -e {go} ]; do sleep 0.1; done'",
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    supervisor: list[str] = []
    try:
        os.set_blocking(submit.stdout.fileno(), False)  # type: ignore[union-attr]
        seen = bytearray()

        def running() -> bool:
            seen.extend(submit.stdout.read() or b"")  # type: ignore[union-attr]
            return b"is running" in seen

        wait_for(running, 60, "the job to run on login1")
        supervisor = hosts.inside("login1", "pgrep", "-f", f"dunscaith submit --name {job}").stdout.split()
        assert len(supervisor) == 1
        hosts.inside("login1", "kill", "-STOP", supervisor[0])
        yield job
    finally:
        for pid in supervisor:
            hosts.inside("login1", "kill", "-CONT", pid, check=False)
        go.touch()
        try:
            submit.wait(60)
        finally:
            if submit.poll() is None:
                submit.kill()
