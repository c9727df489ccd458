"""``stop --emergency`` typed on login2 for a Slurm job submitted on login1, with login1 down (seed 000).

The job's record is login1's own (the default SQLite record root, /var/tmp, which every login node has
to itself); login2 sees only the job's pointer, in the shared home. Every other job command typed on
login2 would be forwarded to login1 over ssh. ``stop --emergency`` is the exception: it reads no record,
uses no ssh, opens the cluster the pointer names with no store and stops every object of the job's name,
so it works while login1 is down.

"login1 down" is a host losing its power, in two steps: its link is cut first (``ip link set eth0
down`` in its network namespace), so that it goes silent as a powered-off host does (no FIN, no RST: an
ssh to it times out) and nothing it does from then on reaches Slurm; then the host itself is taken down
(``SshHosts.take_down``: its init killed, and with it every process of its PID namespace: the job's
supervisor and sshd). Its disk, and so its record in its own /var/tmp, stays; it is booted again
(``bring_up``) at the end, where its supervisor, started again, settles the job from that record.

The commands on login2 are given an ssh configuration whose ProxyCommand notes every attempt and fails:
the test asserts that none was made, and that no forwarded request was written either.
"""

from __future__ import annotations

import json
import pwd
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.infra.forwarding_support import hosts_or_skip
from tests.infra.login_nodes import NoSsh, Watched, job_name, no_ssh_config, out, submit_on
from tests.infra.slurm import SlurmTestCluster, SlurmUnavailable, shared_cluster
from tests.infra.ssh_hosts import SshHosts, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd, pytest.mark.slurm]


@dataclass
class Nodes:
    hosts: SshHosts
    slurm: SlurmTestCluster
    no_ssh: NoSsh

    def on(self, host: str, command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``dunscaith command`` typed on ``host``, where no ssh can leave."""
        return self.hosts.ssh(host, f"DUNSCAITH_FORWARDING__SSH_CONFIG={self.no_ssh.config} "
                                    f"{self.hosts.dunscaith} {command}", timeout=timeout)

    def sent_requests(self) -> set[str]:
        """The forwarded requests of the test user from any host (the caller keeps one file each)."""
        folder = self.hosts.user.home / ".config" / "dunscaith" / "forwarded"
        return {str(p) for p in folder.rglob("*")} if folder.is_dir() else set()

    def active(self, job: str) -> list[str]:
        """The job's Slurm jobs squeue still lists (pending, running, completing...), seen by the cluster."""
        done = self.slurm.run("squeue", f"--name={job}", "--noheader", "--format=%i %T", check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout.split("\n")[:-1]

    def accounted(self, job: str) -> list[str]:
        """``JobID|State`` of every allocation of that name in Slurm's accounting. The window reaches into
        the future: a job cancelled before its --begin time is accounted at it, and sacct's default window
        (midnight to now) leaves it out."""
        done = self.slurm.run("sacct", "-X", "--allusers", "--noheader", "--parsable2", f"--name={job}",
                              "--starttime=now-1days", "--endtime=now+2days", "--format=JobID,State", check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()


@pytest.fixture(scope="module")
def nodes() -> Iterator[Nodes]:
    hosts = hosts_or_skip()
    try:
        slurm = shared_cluster()
    except SlurmUnavailable as exc:
        pytest.skip(str(exc))
    slurm_conf = slurm.reachable_at(hosts.bridge_address, hosts.state / "slurm")
    config = hosts.user.home / ".config" / "dunscaith" / "config.toml"
    before = config.read_text()
    no_ssh = no_ssh_config(hosts, "emergency-no-ssh")
    try:
        # records stay at their default: SQLite under each host's own /var/tmp
        config.write_text(f"{before}\n[clusters.hpc]\nadapter = \"slurm\"\n"
                          f"env = {{ SLURM_CONF = \"{slurm_conf}\" }}\nworkdir = \"{hosts.user.home}\"\n")
        yield Nodes(hosts, slurm, no_ssh)
    finally:
        config.write_text(before)
        no_ssh.remove()
        slurm.stop_relay()



def _submit_on_login1(nodes: Nodes, job: str, *args: str) -> Watched:
    return submit_on(nodes.hosts, "login1", job, *args)


def _state_on_login1(nodes: Nodes, job: str) -> object:
    done = nodes.on("login1", f"status {job} --json")
    return json.loads(out(done)).get("state") if done.returncode in (0, 1) else None


def _take_login1_down(nodes: Nodes, login1: Watched) -> None:
    hosts = nodes.hosts
    hosts.cut_link("login1")
    hosts.take_down("login1")
    login1.ended(30)  # its supervisor died with the host
    # login1 is out of reach from login2: what the user's own ssh meets there
    unreachable = hosts.ssh("login2", "ssh -o ConnectTimeout=3 login1 true")
    assert unreachable.returncode == 255 and "timed out" in unreachable.stderr, unreachable.stderr


def _bring_login1_back(nodes: Nodes) -> None:
    nodes.hosts.restore_link("login1")
    nodes.hosts.bring_up("login1")


def _own_files(nodes: Nodes, host: str) -> list[str]:
    """Everything under the user's record root on ``host`` (its own /var/tmp)."""
    done = nodes.hosts.inside(host, "find", f"/var/tmp/dunscaith-{nodes.hosts.user.name}",
                              user=nodes.hosts.user.name, check=False)
    return sorted(done.stdout.split())


def _record_only_on_login1(nodes: Nodes, job: str) -> None:
    user = nodes.hosts.user.name
    pointer = json.loads((nodes.hosts.user.home / ".config" / "dunscaith" / "jobs" / job).read_text())
    assert pointer["host"] == "login1" and pointer["cluster"] == "hpc", pointer
    record = f"/var/tmp/dunscaith-{user}/records.db"
    assert nodes.hosts.ssh("login1", f"test -e {record}").returncode == 0
    assert nodes.hosts.ssh("login2", f"test -e {record}").returncode != 0  # login2 has no record of its own


def _emergency_stop_on_login2(nodes: Nodes, job: str) -> str:
    """What the user sees on login2, asserted as docs/job-commands.md says; the object stopped."""
    before, files = nodes.sent_requests(), _own_files(nodes, "login2")
    started = time.monotonic()
    done = nodes.on("login2", f"stop --emergency {job}")
    print(f"\nstop --emergency on login2, login1 down: {time.monotonic() - started:.2f} s (ssh login included)")
    said = out(done)
    assert done.returncode == 0, (said, done.stderr)
    (line,) = said.splitlines()
    prefix = f"stopped 1 object(s) of {job} on cluster hpc: "
    assert line.startswith(prefix), line
    assert done.stderr.strip() == "", done.stderr  # no warning, no hop, no "could not connect"
    assert nodes.no_ssh.tried() == [], "an ssh was attempted"
    assert nodes.sent_requests() == before  # nothing forwarded
    assert _own_files(nodes, "login2") == files  # no store opened, nothing recorded on login2
    return line.removeprefix(prefix)


def _stopped_in_slurm(nodes: Nodes, job: str, object_id: str) -> None:
    wait_for(lambda: nodes.active(job) == [], 60, "squeue to list nothing of the job")
    uid = pwd.getpwnam(nodes.hosts.user.name).pw_uid
    cancelled = f"{object_id}|CANCELLED by {uid}"  # by the user's own scancel (typed on login2)
    seen: list[str] = []

    def accounted_as_cancelled() -> bool:
        seen[:] = nodes.accounted(job)
        return cancelled in seen

    try:
        wait_for(accounted_as_cancelled, 60, "sacct")
    except AssertionError:
        raise AssertionError(f"sacct never said {cancelled!r}; it says {seen}") from None
    assert nodes.accounted(job) == [cancelled]  # one Slurm job ever, that one
    again = nodes.on("login2", f"stop --emergency {job} --json")
    assert again.returncode == 0, again.stderr
    assert json.loads(out(again)) == {"job": job, "cluster": "hpc", "stopped": [], "problem": None}
    assert nodes.no_ssh.tried() == []


def _settled_when_login1_is_back(nodes: Nodes, job: str, object_id: str, requests: tuple[str, ...] = ()) -> None:
    """login1 back: its record was never touched, and its supervisor, started again there, finds the
    object cancelled outside dunscaith and ends the job as for any such cancel (docs/supervisor.md)."""
    _bring_login1_back(nodes)
    again = nodes.on("login1", f"supervise {job}")
    assert again.returncode == 1, out(again) + again.stderr
    record = json.loads(out(nodes.on("login1", f"status {job} --json")))
    outcome = record["outcome"]  # the detail is Slurm's: "cancelled", or "cancelled, JobHeldUser" for a held job
    assert outcome["result"] == "failed" and outcome["detail"].startswith("cancelled"), outcome
    assert [(a["object_id"], a["object_state"]) for a in record["attempts"]] == [(object_id, "cancelled")]
    assert tuple(r["action"] for r in record["requests"]) == requests and record["settled"] is True, record


def _stop_on_login2_while_login1_is_down(nodes: Nodes, login1: Watched, job: str, active: str,
                                         requests: tuple[str, ...] = ()) -> None:
    """The record only on login1, login1 down, the stop typed on login2; then what Slurm and login1 show."""
    _record_only_on_login1(nodes, job)
    _take_login1_down(nodes, login1)
    stopped = _emergency_stop_on_login2(nodes, job)
    assert stopped == active.split()[0]
    _stopped_in_slurm(nodes, job, stopped)
    _settled_when_login1_is_back(nodes, job, stopped, requests=requests)


def test_emergency_stop_on_login2_stops_a_running_slurm_job_while_login1_is_down(nodes: Nodes) -> None:
    job = job_name("emr")
    login1 = _submit_on_login1(nodes, job, "-- /bin/sleep 600")
    try:
        login1.wait_for("is running")
        (running,) = nodes.active(job)
        assert running.endswith(" RUNNING"), running
        _stop_on_login2_while_login1_is_down(nodes, login1, job, running)
    finally:
        _bring_login1_back(nodes)
        login1.stop()
        nodes.slurm.run("scancel", f"--name={job}", check=False)


def test_emergency_stop_on_login2_stops_a_held_slurm_job_while_login1_is_down(nodes: Nodes) -> None:
    job = job_name("emh")
    # --begin keeps the released object pending, so that the user can hold it on login1 before it starts
    login1 = _submit_on_login1(nodes, job, "--sbatch=--begin=now+3600", "-- /bin/sleep 600")
    try:
        wait_for(lambda: _state_on_login1(nodes, job) == "pending", 120, "the job pending on login1")
        hold = nodes.on("login1", f"hold {job}")
        assert hold.returncode == 0 and "hold confirmed by its supervisor" in out(hold), hold.stdout + hold.stderr
        wait_for(lambda: _state_on_login1(nodes, job) == "held", 60, "the job held on login1")
        (held,) = nodes.active(job)
        assert held.endswith(" PENDING"), held
        _stop_on_login2_while_login1_is_down(nodes, login1, job, held, requests=("hold",))
    finally:
        _bring_login1_back(nodes)
        login1.stop()
        nodes.slurm.run("scancel", f"--name={job}", check=False)
