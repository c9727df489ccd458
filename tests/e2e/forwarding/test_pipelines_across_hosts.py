"""A pipeline submitted on login1, and commands on its name typed on login2 (real sshd hosts, the real CLI as
the user): each is forwarded to login1, found by the pointers of the pipeline's jobs (a pipeline has none of
its own), and acts there as it would on login1 itself; nothing is recorded on login2 (issue 40)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.forwarding.test_jobs_across_hosts import out
from tests.e2e.forwarding.test_sweeps_across_hosts import _no_store_on_login2
from tests.infra.ssh_hosts import SshHosts

pytestmark = [pytest.mark.slow, pytest.mark.sshd]


def test_status_and_cancel_of_a_pipeline_from_login2_act_on_login1(hosts: SshHosts, tmp_path: Path) -> None:
    ds = hosts.dunscaith
    name = f"pl-{tmp_path.name[-6:]}"
    toml = hosts.user.home / f"{name}.toml"
    toml.write_text(
        f'name = "{name}"\n'
        '[[step]]\nname = "train"\ncommand = ["sh", "-c", "test {} != 1"]\narray = "0-2"\n'
        '[[step]]\nname = "reduce"\ncommand = "true"\nafter = ["train"]\n'
    )
    toml.chmod(0o644)
    done = hosts.ssh("login1", f"cd {hosts.user.home} && {ds} submit --pipeline {toml}")
    assert done.returncode == 1, done.stdout + done.stderr

    there = hosts.ssh("login2", f"{ds} status {name} --json")
    assert there.returncode == 1, there.stderr
    body = json.loads(out(there))
    assert body["kind"] == "pipeline" and body["state"] == "failed"
    assert [(s["job"], s["state"]) for s in body["steps"]] == [
        (f"{name}.train", "failed"),
        (f"{name}.reduce", "blocked"),
    ]
    cancelled = hosts.ssh("login2", f"{ds} cancel {name}.reduce")
    assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
    lines = out(hosts.ssh("login1", f"{ds} status {name}")).splitlines()
    assert lines[2].split() == [f"{name}.reduce", "cancelled"], lines
    _no_store_on_login2(hosts)
