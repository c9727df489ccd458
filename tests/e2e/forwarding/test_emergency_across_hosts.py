"""`stop --emergency` typed on login2 for a Slurm job submitted on login1, while login1 is down.

Seed 000: it reads no record and uses no SSH; it opens the cluster with no store and stops every object
that carries the job's name, so it works when the owning host is down. The cluster is the session's real
Slurm, which the login nodes reach over their bridge (tests/infra/slurm.py ``reachable_at``).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra.forwarding_support import hosts_or_skip
from tests.infra.slurm import SlurmTestCluster, SlurmUnavailable, shared_cluster
from tests.infra.ssh_hosts import NOISE, SshHosts, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd, pytest.mark.slurm]


@pytest.fixture(scope="module")
def hosts() -> SshHosts:
    return hosts_or_skip()


@pytest.fixture(scope="module")
def slurm(hosts: SshHosts) -> Iterator[tuple[SlurmTestCluster, Path]]:
    try:
        cluster = shared_cluster()
    except SlurmUnavailable as exc:
        pytest.skip(str(exc))
    conf = cluster.reachable_at(hosts.bridge_address, hosts.state / "slurm-emergency")
    config = hosts.user.home / ".config" / "dunscaith" / "config.toml"
    before = config.read_text()
    table = f'env = {{ SLURM_CONF = {json.dumps(str(conf))} }}'
    config.write_text(before + f'\n[clusters.test]\nadapter = "slurm"\n{table}\n')
    try:
        yield cluster, conf
    finally:
        config.write_text(before)


def _objects(cluster: SlurmTestCluster, name: str) -> list[str]:
    done = cluster.run("squeue", "-h", "-n", name, "-o", "%i %T", check=False)
    return [line for line in done.stdout.splitlines() if line.strip()]


def _own_files(hosts: SshHosts, host: str) -> list[str]:
    done = hosts.inside(host, "find", f"/var/tmp/dunscaith-{hosts.user.name}", user=hosts.user.name, check=False)
    return sorted(done.stdout.split())


def test_stop_emergency_on_login2_stops_a_slurm_job_of_login1_while_login1_is_down(
        hosts: SshHosts, slurm: tuple[SlurmTestCluster, Path], tmp_path: Path) -> None:
    cluster, _ = slurm
    name = f"em-{tmp_path.name[-6:]}"
    supervisor = hosts.popen("login1", f"{hosts.dunscaith} submit --cluster test --name {name} -- /bin/sleep 600",
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: any("RUNNING" in line for line in _objects(cluster, name)), 120,
                 "the job to run on Slurm under its supervisor on login1")
        hosts.take_down("login1")
        assert hosts.ssh("login2", "ssh -o ConnectTimeout=3 login1 true").returncode != 0  # login1 is down
        before = _own_files(hosts, "login2")
        done = hosts.ssh("login2", f"{hosts.dunscaith} stop --emergency {name}")
        said = "".join(line for line in done.stdout.splitlines(keepends=True) if line.strip() != NOISE)
        assert done.returncode == 0, (said, done.stderr)
        assert said.startswith(f"stopped 1 object(s) of {name} on cluster test: "), said
        assert "login1" not in done.stderr  # no hop was tried
        wait_for(lambda: not any("RUNNING" in line or "PENDING" in line for line in _objects(cluster, name)), 60,
                 "Slurm to end the job's object")
        assert _own_files(hosts, "login2") == before  # nothing was recorded on login2
    finally:
        supervisor.kill()
        supervisor.wait(timeout=30)
        hosts.bring_up("login1")
