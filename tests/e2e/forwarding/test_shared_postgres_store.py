"""Issue 12's "done when", for real: two sshd login nodes share one PostgreSQL store and one Slurm cluster.

login1 and login2 are the namespaces of tests/infra/ssh_hosts.py (each its own hostname, machine id,
/var/tmp and network); the PostgreSQL 15 server listens on the machine's address on their bridge, the
only address they reach. The scheduler is the real Slurm of tests/infra/slurm.py, told to the hosts
through that same address (tests/infra/slurm.py ``reachable_at``): a Slurm job is reachable from every
login node, as on a real cluster, whereas the local scheduler's objects are processes of one host
(its jobs are forwarded to their host instead, test_local_jobs_are_forwarded_to_their_host).

Everything is typed as the test user: login1's supervisor runs inside login1's namespaces (nsenter, so
that cutting login1's link does not also cut the test's view of it); the commands on login2 go in by
ssh as a user logs in, and are given an ssh configuration under which no ssh can connect: every one of
them commits in the shared store, none is forwarded. Takeover times are printed (run with ``-s``), not
asserted.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.domain.model.jobs.ids import JobId
from tests.infra.forwarding_support import hosts_or_skip
from tests.infra.login_nodes import Watched, inside, job_name, no_ssh_config, out, submit_on
from tests.infra.postgres import PostgresTestServer, PostgresUnavailable, private_server
from tests.infra.slurm import SlurmTestCluster, SlurmUnavailable, shared_cluster
from tests.infra.ssh_hosts import SshHosts, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd, pytest.mark.postgres, pytest.mark.slurm]

# Short lock timings (records.postgresql), so that a cut network is seen and released in a test's time:
# the holder notices within about poll + 2 s, the server frees a silent holder's lock about 6 s after
# its last exchange (../shared/notes/postgres.md: keepalives 2/1 + tcp_user_timeout 6 s freed it in 5.6 s).
TIMINGS = {"client_keepalives_idle": 1, "client_keepalives_interval": 1, "client_keepalives_count": 2,
           "client_user_timeout": 2, "server_keepalives_idle": 2, "server_keepalives_interval": 1,
           "server_keepalives_count": 10, "server_user_timeout": 6}


@dataclass
class Shared:
    hosts: SshHosts
    server: PostgresTestServer
    url: str
    slurm_conf: Path
    no_ssh: Path  # an ssh config under which every connection fails before it is made

    def store(self) -> PostgresStore:
        return PostgresStore.open(PostgresTarget.from_settings(self.url))

    def kinds(self, job: str) -> list[str]:
        with self.store() as store:
            return [line.kind for line in store.read(JobId(job)).events]

    def held(self, job: str) -> bool:
        with self.store() as store:
            return store.health(JobId(job)).held

    def on_login2(self, command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """A command typed on login2, where no ssh can leave: whatever it does, it does without forwarding."""
        ds = self.hosts.dunscaith
        return self.hosts.ssh("login2", f"DUNSCAITH_FORWARDING__SSH_CONFIG={self.no_ssh} {ds} {command}",
                              timeout=timeout)


@pytest.fixture(scope="module")
def shared() -> Iterator[Shared]:
    hosts = hosts_or_skip()
    try:
        slurm: SlurmTestCluster = shared_cluster()
    except SlurmUnavailable as exc:
        pytest.skip(str(exc))
    slurm_conf = slurm.reachable_at(hosts.bridge_address, hosts.state / "slurm")
    config = hosts.user.home / ".config" / "dunscaith" / "config.toml"
    before = config.read_text()
    no_ssh = no_ssh_config(hosts)
    try:
        with private_server(listen=hosts.bridge_address) as server:
            url = server.url(server.new_database("shared"))
            timings = "".join(f"{key} = {value}\n" for key, value in TIMINGS.items())
            config.write_text(
                f"{before}\n[records]\nbackend = \"postgresql\"\nurl = \"{url}\"\n\n[records.postgresql]\n{timings}\n"
                f"[clusters.hpc]\nadapter = \"slurm\"\nenv = {{ SLURM_CONF = \"{slurm_conf}\" }}\n"
                f"workdir = \"{hosts.user.home}\"\n")
            yield Shared(hosts, server, url, slurm_conf, no_ssh.config)
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    finally:
        config.write_text(before)
        no_ssh.remove()
        slurm.stop_relay()



def _submit_on_login1(shared: Shared, job: str, *args: str) -> Watched:
    return submit_on(shared.hosts, "login1", job, *args)


def _status(shared: Shared, job: str) -> dict[str, object]:
    done = shared.on_login2(f"status {job} --json")
    assert done.returncode in (0, 1), done.stderr
    return json.loads(out(done))  # type: ignore[no-any-return]


def _state(shared: Shared, job: str) -> object:
    """The job's state seen from login2, None until login1 has recorded it."""
    done = shared.on_login2(f"status {job} --json")
    return json.loads(out(done)).get("state") if done.returncode in (0, 1) else None


def _slurm_jobs(shared: Shared, job: str) -> list[str]:
    """Every Slurm job of that name, whatever its state: the proof of "never a second create"."""
    done = shared.hosts.ssh("login2", f"SLURM_CONF={shared.slurm_conf} squeue --name={job} --noheader "
                                      "--states=all --format=%i")
    return out(done).split()


def _go(shared: Shared, job: str) -> tuple[Path, str]:
    go = shared.hosts.user.home / f"go-{job}"
    return go, f"-- /bin/sh -c 'while [ ! -e {go} ]; do sleep 0.2; done; echo done-{job}'"


def test_a_job_submitted_on_login1_is_held_released_and_cancelled_from_login2_with_no_ssh(shared: Shared) -> None:
    job = job_name("pgh")
    # --begin keeps the released object pending (BeginTime), so that it can be held
    login1 = _submit_on_login1(shared, job, "--sbatch=--begin=now+3600", "-- /bin/sleep 600")
    try:
        wait_for(lambda: _state(shared, job) == "pending", 120, "the job pending, seen from login2")
        seen = _status(shared, job)
        assert seen["supervisor"]["held"] is True  # type: ignore[index]  # by login1's supervisor
        for action, word in (("hold", "held"), ("release", "pending")):
            done = shared.on_login2(f"{action} {job}")
            assert done.returncode == 0, done.stdout + done.stderr
            assert f"{action} confirmed by its supervisor" in out(done)
            wait_for(lambda w=word: _state(shared, job) == w, 60, f"the job {word} after {action}")
        done = shared.on_login2(f"cancel {job}")
        assert done.returncode == 0 and "cancel confirmed by its supervisor" in out(done), done.stderr
        assert login1.ended(60) == 1, login1.text()  # login1's supervisor: outcome cancelled
        record = _status(shared, job)
        assert record["outcome"]["result"] == "cancelled"  # type: ignore[index]
        assert [r["action"] for r in record["requests"]] == ["hold", "release", "cancel"]  # type: ignore[attr-defined]
        kinds = shared.kinds(job)
        # every step once: one create; released by the supervisor, held and released again by the requests
        counts = {kind: kinds.count(kind) for kind in ("submitting", "created", "held", "released", "request",
                                                       "answer", "outcome")}
        assert counts == {"submitting": 1, "created": 1, "held": 1, "released": 2, "request": 3, "answer": 3,
                          "outcome": 1}, " ".join(kinds)
        assert len(_slurm_jobs(shared, job)) == 1
        # nothing of the job on login2's own disk: the store is the server's
        assert shared.hosts.ssh("login2", f"ls /var/tmp/dunscaith-{shared.hosts.user.name}/records.db").returncode != 0
    finally:
        login1.stop()


def test_login2_takes_over_after_login1s_supervisor_is_killed(shared: Shared) -> None:
    job = job_name("pgk")
    go, command = _go(shared, job)
    login1 = _submit_on_login1(shared, job, command)
    login2 = None
    try:
        login1.wait_for("is running")
        refused = shared.on_login2(f"supervise {job}")
        assert refused.returncode == 2 and "locked" in refused.stderr  # login1's supervisor holds it
        pids = shared.hosts.inside("login1", "pgrep", "-f", f"dunscaith submit --cluster hpc --name {job}",
                                   check=False).stdout.split()
        assert pids, login1.text()
        killed = time.monotonic()
        for pid in pids:
            shared.hosts.inside("login1", "kill", "-KILL", pid, check=False)
        login1.process.wait(30)
        wait_for(lambda: not shared.held(job), 30, "the server to free the lock")
        freed = time.monotonic()
        login2 = Watched(shared.hosts.popen("login2", f"DUNSCAITH_FORWARDING__SSH_CONFIG={shared.no_ssh} "
                                                      f"{shared.hosts.dunscaith} supervise {job}",
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        took_over = login2.wait_for("supervising again")
        print(f"\nTAKEOVER after SIGKILL: lock free {freed - killed:.2f} s after the kill; login2's supervise "
              f"supervising {took_over - killed:.2f} s after it (including its start over ssh)")
        go.touch()
        assert login2.ended() == 0, login2.text()
        kinds = shared.kinds(job)
        assert kinds.count("submitting") == 1 and kinds.count("released") == 1, kinds
        assert kinds.count("outcome") == 1 and kinds[-1] == "settled", kinds
        assert len(_slurm_jobs(shared, job)) == 1
        assert _status(shared, job)["outcome"]["result"] == "succeeded"  # type: ignore[index]
    finally:
        go.touch()
        login1.stop()
        if login2 is not None:
            login2.stop()


def test_login2_takes_over_after_login1s_network_is_cut(shared: Shared) -> None:
    hosts = shared.hosts
    job = job_name("pgc")
    go, command = _go(shared, job)
    login1 = _submit_on_login1(shared, job, command)
    login2 = None
    try:
        login1.wait_for("is running")
        freed: list[float] = []

        def watch_the_lock() -> None:  # from the machine: when does the server let the lock go?
            while shared.held(job):
                time.sleep(0.1)
            freed.append(time.monotonic())

        hosts.cut_link("login1")
        cut = time.monotonic()
        watcher = threading.Thread(target=watch_the_lock, daemon=True)
        watcher.start()
        watcher.join(120)
        assert freed, "the server never freed the cut-off holder's lock"
        # login2 takes the job over as soon as the server lets the lock go, whether or not login1 knows yet
        login2 = Watched(hosts.popen("login2", f"DUNSCAITH_FORWARDING__SSH_CONFIG={shared.no_ssh} "
                                               f"{hosts.dunscaith} supervise {job}",
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        took_over = login2.wait_for("supervising again")
        # login1's supervisor learns it on its next exchange with the server (here: once its squeue to the
        # unreachable slurmctld has failed, then the lock's check), sends nothing more and exits 4
        assert login1.ended() == 4, login1.text()
        noticed = time.monotonic()
        assert "lost the job's lock" in login1.text()
        print(f"\nTAKEOVER after a cut network: the server freed the lock {freed[0] - cut:.2f} s after the cut; "
              f"login2 supervising {took_over - cut:.2f} s after it; login1 noticed its loss {noticed - cut:.2f} s "
              "after it")
        go.touch()
        assert login2.ended() == 0, login2.text()
        kinds = shared.kinds(job)
        assert kinds.count("submitting") == 1 and kinds.count("released") == 1, kinds
        assert kinds.count("outcome") == 1 and kinds[-1] == "settled", kinds
        assert len(_slurm_jobs(shared, job)) == 1
    finally:
        go.touch()
        hosts.restore_link("login1")
        login1.stop()
        if login2 is not None:
            login2.stop()


def _sent_requests(shared: Shared) -> set[str]:
    """The requests forwarded from any host by the test user (the caller's side keeps one file each)."""
    folder = shared.hosts.user.home / ".config" / "dunscaith" / "forwarded"
    return {p.name for p in folder.rglob("*")} if folder.is_dir() else set()


def test_local_jobs_are_forwarded_to_their_host_from_a_node_sharing_the_store(shared: Shared) -> None:
    """A local-scheduler job's objects are login1's processes: from login2, status reads the shared store
    where it is typed, while cancel and supervise run on login1 over ssh, as for a job of another host."""
    hosts, ds = shared.hosts, shared.hosts.dunscaith
    job = job_name("pgl")
    go, command = _go(shared, job)
    login1 = inside(hosts, "login1", f"{ds} submit --name {job} {command}")
    login2 = None
    try:
        login1.wait_for("is running")
        before = _sent_requests(shared)
        seen = hosts.ssh("login2", f"{ds} status {job} --json")  # read where typed: nothing forwarded
        assert seen.returncode == 0 and json.loads(out(seen))["state"] == "running", seen.stderr
        assert _sent_requests(shared) == before
        # supervise from login2: forwarded to login1, where the live supervisor holds the job
        again = hosts.ssh("login2", f"{ds} supervise {job}")
        assert again.returncode == 2 and "locked" in again.stderr, again.stderr
        # the supervisor killed: login2's supervise runs on login1 (the job's processes are there)
        for pid in hosts.inside("login1", "pgrep", "-f", f"dunscaith submit --name {job}", check=False).stdout.split():
            hosts.inside("login1", "kill", "-KILL", pid, check=False)
        login1.ended(30)
        wait_for(lambda: not shared.held(job), 30, "the lock free")
        login2 = Watched(hosts.popen("login2", f"{ds} supervise {job}", stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        login2.wait_for("supervising again")
        assert hosts.processes("login1", f"dunscaith supervise {job}"), "the supervisor runs on login1"
        # cancel from login2: forwarded to login1, answered by the supervisor running there
        cancel = hosts.ssh("login2", f"{ds} cancel {job}")
        assert cancel.returncode == 0 and "cancel confirmed by its supervisor" in out(cancel), cancel.stderr
        assert login2.ended(60) == 1, login2.text()  # the forwarded supervise: outcome cancelled
        assert len(_sent_requests(shared) - before) >= 3  # supervise (refused), supervise, cancel went by ssh
        kinds = shared.kinds(job)
        assert kinds.count("submitting") == 1 and kinds.count("released") == 1, kinds
        assert _status(shared, job)["outcome"]["result"] == "cancelled"  # type: ignore[index]
    finally:
        go.touch()
        login1.stop()
        if login2 is not None:
            login2.stop()
