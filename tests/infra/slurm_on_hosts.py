"""A test Slurm the sshd login nodes can reach (tests/infra/slurm.py + tests/infra/ssh_hosts.py).

The session's shared Slurm cannot serve the hosts as it is: its root (config, munge socket) lies under
the machine's /var/tmp, which each host's own /var/tmp hides, and its clients are told slurmctld is at
127.0.0.1, which in a host's network namespace is the host's own loopback. So this starts a cluster of
its own whose root is in the hosts' state folder (seen by every host, like /usr), and writes a client
configuration for the hosts that names the machine by its address on the hosts' bridge (slurmctld and
slurmdbd listen on every address). Only clients' calls to the daemons work from a host (sbatch, squeue,
scancel, sacct); nothing that needs a daemon to call a host back (srun, salloc).
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path

from tests.infra.slurm import SlurmTestCluster, missing_components
from tests.infra.ssh_hosts import SshHosts


class SlurmOnHostsUnavailable(RuntimeError):
    """The machine lacks a Slurm component; the message names it."""


def slurm_for_hosts(hosts: SshHosts) -> tuple[SlurmTestCluster, Path]:
    """A started cluster and the slurm.conf a client on any host uses (give it as SLURM_CONF)."""
    missing = missing_components()
    if missing:
        raise SlurmOnHostsUnavailable("real Slurm test cluster unavailable, missing: " + ", ".join(missing))
    root = hosts.state / "slurm"
    root.mkdir(mode=0o755)
    cluster = SlurmTestCluster(root)
    atexit.register(cluster.stop)  # before the hosts' own stop removes the state folder (atexit runs LIFO)
    cluster.start()
    bridge = f"{hosts.subnet}.1"
    text = cluster.conf.read_text()
    for local in ("(127.0.0.1)", "AccountingStorageHost=localhost"):
        assert local in text, f"the test cluster's slurm.conf no longer says {local}"
    text = text.replace("(127.0.0.1)", f"({bridge})").replace("AccountingStorageHost=localhost",
                                                              f"AccountingStorageHost={bridge}")
    for_hosts = root / "etc" / "slurm-hosts.conf"
    for_hosts.write_text(text)
    os.chmod(for_hosts, 0o644)
    return cluster, for_hosts
