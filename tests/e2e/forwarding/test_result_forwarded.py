"""``supervise JOB --json --job-exit-code`` typed on login2 for a job of login1 (real sshd hosts): run there,
its result object and its exit code come back as they were there (docs/json.md, docs/exit-codes.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.infra.ssh_hosts import NOISE, SshHosts

pytestmark = [pytest.mark.slow, pytest.mark.sshd]


def test_a_forwarded_supervise_json_gives_the_owning_hosts_result_and_the_jobs_code(
        hosts: SshHosts, tmp_path: Path) -> None:
    ds = hosts.dunscaith
    job = f"r-{tmp_path.name[-6:]}"
    first = hosts.ssh("login1", f"{ds} submit --json --name {job} -- /bin/sh -c 'exit 3'", timeout=120)
    assert first.returncode == 1, first.stderr
    there = hosts.ssh("login2", f"{ds} supervise {job} --json --job-exit-code", timeout=120)
    assert there.returncode == 3, there.stderr
    result = json.loads("".join(line for line in there.stdout.splitlines() if line.strip() != NOISE))
    assert (result["job"], result["exit_code"], result["exit_code_from"]) == (job, 3, "job")
    assert result["record"]["host"] == "login1" and result["job_exit_code"] == 3
    assert result["attempts"] == json.loads("".join(
        line for line in first.stdout.splitlines() if line.strip() != NOISE))["attempts"]
