"""Start and stop a private single-node Slurm 22.05 (with real accounting) for the tests.

Installs nothing: the Debian packages come from ``.ci/install-packages``. Everything lives under one
root folder of its own (config, munge key and socket, MariaDB data, state, logs, pid files) on ports
picked free at start, so it never touches /etc/slurm or /etc/munge and two sessions can run side by
side. Written from ../shared/notes/slurm-local.md and slurm-accounting.md:

- munged with its own key and socket; every Slurm daemon and client is told that socket
  (``AuthInfo=socket=``, and ``AccountingStoragePass=`` for the slurmdbd connections, which ignore
  AuthInfo);
- MariaDB (server-core only, run as root, ``--defaults-file`` first) + slurmdbd, so ``sacct`` is real,
  with ``AccountingStoreFlags=job_comment`` so the attempt nonce survives in accounting;
- memory is a consumable (``CR_Core_Memory``, ``DefMemPerCPU=1024``) and ``--mem`` is enforced: by task/cgroup
  on cgroup v1's memory controller where this machine lets root make cgroups (a job past it ends
  ``OUT_OF_MEMORY``), else by ``OverMemoryKill`` polling (``memory_enforcement``);
- slurmctld and slurmd as root, processes tracked without cgroups (proctrack/linuxproc), ``MinJobAge`` short so
  the purge-then-sacct path is exercised, ``cred_expire`` short so a requeue reruns in seconds;
- two partitions on the one node: ``debug`` (the default) and ``urgent``, whose jobs preempt (cancel)
  ``debug`` jobs, so a preemption can be tested.

Stopping signals only what this root started: the pids in ``run/*.pid`` checked against their
``/proc/PID/exe``, then stragglers (slurmstepd, job processes) whose environment names this root.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

CLUSTER_NAME = "dunscaith"
MARKER = "DUNSCAITH_SLURM_TEST_ROOT"  # set on every daemon; slurmstepd inherits it from slurmd

# Executable → Debian package that ships it, for the skip message.
COMPONENTS: Mapping[str, str] = {
    "/usr/sbin/munged": "munge",
    "/usr/sbin/mungekey": "munge",
    "/usr/sbin/slurmctld": "slurmctld",
    "/usr/sbin/slurmd": "slurmd",
    "/usr/sbin/slurmdbd": "slurmdbd",
    "/usr/bin/sbatch": "slurm-client",
    "/usr/bin/sacct": "slurm-client",
    "/usr/bin/sacctmgr": "slurm-client",
    "/usr/sbin/mariadbd": "mariadb-server-core",
    "/usr/bin/mariadb-install-db": "mariadb-server-core",
    "/usr/bin/mariadb": "mariadb-client-core",
    "/usr/lib/x86_64-linux-gnu/slurm-wlm/accounting_storage_mysql.so": "slurm-wlm-mysql-plugin",
}


class SlurmStartError(RuntimeError):
    """A daemon did not come up; the message carries the tail of its log."""


def missing_components() -> list[str]:
    """What the test cluster needs and this machine lacks, as 'executable (package)' lines."""
    missing = []
    for path, package in COMPONENTS.items():
        if path.endswith(".so"):
            libdirs = [Path(path).parent, Path("/usr/lib/aarch64-linux-gnu/slurm-wlm")]
            if not any((d / Path(path).name).exists() for d in libdirs):
                missing.append(f"{Path(path).name} ({package})")
        elif not os.access(path, os.X_OK):
            missing.append(f"{path} ({package})")
    if os.geteuid() != 0:
        missing.append("root (the daemons run as root, as in CI)")
    return missing


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _node_memory_mb() -> int:
    out = subprocess.run(["/usr/sbin/slurmd", "-C"], capture_output=True, text=True, check=False).stdout
    for word in out.split():
        if word.startswith("RealMemory="):
            return max(256, int(word.split("=", 1)[1]) // 2)
    return 1024


@dataclass
class SlurmTestCluster:
    root: Path
    min_job_age: int = 10
    cred_expire: int = 10
    slurmd_timeout: int = 10
    message_timeout: int = 10
    timeout: float = 60.0
    ports: dict[str, int] = field(default_factory=dict)
    _mariadb: subprocess.Popen[bytes] | None = None

    def __post_init__(self) -> None:
        for name in ("ctld", "slurmd", "dbd", "mysql"):
            self.ports.setdefault(name, free_port())
        self.node = socket.gethostname().split(".")[0]
        self.extra_conf = ""  # more slurm.conf lines (an experiment's)
        # how --mem is enforced (memory_enforcement()): "cgroup" (the job's end is OUT_OF_MEMORY) or
        # "overmemorykill" (polling: FAILED 0:9, which no one can tell from another kill -9)
        self.memory_enforcement = memory_enforcement()
        # Jobs number from a random first id: with task/cgroup every test cluster of this machine keeps its
        # jobs' cgroups under one /sys/fs/cgroup/memory/slurm/uid_N/job_ID, so two clusters' job 1 would meet
        self.first_job_id = 1000 + secrets.randbelow(50_000_000)
        self.cpus = os.cpu_count() or 1

    # ---- paths and environment -------------------------------------------------------------
    @property
    def conf(self) -> Path:
        return self.root / "etc" / "slurm.conf"

    @property
    def munge_socket(self) -> Path:
        return self.root / "munge" / "socket" / "munge.socket.2"

    @property
    def env(self) -> dict[str, str]:
        """What a Slurm client needs to reach this cluster (the ``env`` table of a cluster)."""
        return {"SLURM_CONF": str(self.conf)}

    def client_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def _daemon_env(self) -> dict[str, str]:
        return {**os.environ, **self.env, MARKER: str(self.root)}

    def run(self, *argv: str, check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command against this cluster (for tests' own checks and setup)."""
        result = subprocess.run(
            list(argv), capture_output=True, text=True, env=self.client_env(), timeout=timeout, check=False
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: rc {result.returncode}: {result.stderr.strip()}")
        return result

    # ---- start ---------------------------------------------------------------------------------
    def start(self) -> None:
        for sub in ("etc", "munge/key", "munge/socket", "munge/lib", "state/ctld", "state/d", "log", "run", "mysql"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        # A non-root submitter must read slurm.conf, reach the munge socket and exec its batch script
        # from the slurmd spool; everything else stays root's.
        for sub, mode in (("", 0o755), ("etc", 0o755), ("munge", 0o755), ("munge/socket", 0o755),
                          ("munge/key", 0o700), ("munge/lib", 0o700), ("state", 0o755), ("state/d", 0o755),
                          ("state/ctld", 0o700), ("log", 0o755), ("run", 0o755), ("mysql", 0o700)):
            os.chmod(self.root / sub, mode)
        try:
            self._start_munge()
            self._start_mariadb()
            self._start_slurmdbd()
            self._write_slurm_conf()
            self._spawn("slurmctld", ["/usr/sbin/slurmctld", "-f", str(self.conf)])
            self._wait("slurmctld answers", lambda: self.run("scontrol", "ping", check=False).returncode == 0,
                       "slurmctld")
            self.start_slurmd()
        except BaseException:
            self.stop(purge=False)
            raise

    def _start_munge(self) -> None:
        key = self.root / "munge/key/munge.key"
        if not key.exists():
            subprocess.run(["/usr/sbin/mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True)
            os.chmod(key, 0o600)
        self._spawn("munged", [
            "/usr/sbin/munged", f"--socket={self.munge_socket}", f"--key-file={key}",
            f"--pid-file={self.root}/run/munged.pid", f"--log-file={self.root}/log/munged.log",
            f"--seed-file={self.root}/munge/lib/munged.seed",
        ])

        def round_trip() -> bool:
            enc = subprocess.run(["munge", "-n", "-S", str(self.munge_socket)], capture_output=True, check=False)
            if enc.returncode != 0:
                return False
            dec = subprocess.run(["unmunge", "-S", str(self.munge_socket)], input=enc.stdout,
                                 capture_output=True, check=False)
            return dec.returncode == 0

        self._wait("munge round trip", round_trip, "munged")

    def _start_mariadb(self) -> None:
        cnf = self.root / "etc/my.cnf"
        sock = self.root / "mysql/mysqld.sock"
        cnf.write_text(
            "[mariadbd]\n"
            "user=root\n"
            f"datadir={self.root}/mysql/data\n"
            f"socket={sock}\n"
            f"pid-file={self.root}/run/mariadbd.pid\n"
            f"log-error={self.root}/log/mariadbd.log\n"
            "bind-address=127.0.0.1\n"
            f"port={self.ports['mysql']}\n"
            "skip-name-resolve\n"
            "innodb_buffer_pool_size=64M\ninnodb_log_file_size=16M\ninnodb_log_buffer_size=2M\n"
            "key_buffer_size=1M\naria_pagecache_buffer_size=8M\nperformance_schema=OFF\n"
        )
        if not (self.root / "mysql/data").exists():
            subprocess.run(
                ["/usr/bin/mariadb-install-db", f"--defaults-file={cnf}", "--auth-root-authentication-method=socket",
                 "--skip-test-db"],
                check=True, capture_output=True, timeout=120,
            )
        log = open(self.root / "log/mariadbd.out", "ab")  # noqa: SIM115 - handed to the daemon
        # mariadbd does not daemonize: keep its Popen so a bind failure shows at once.
        self._mariadb = subprocess.Popen(
            ["/usr/sbin/mariadbd", f"--defaults-file={cnf}"], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            env=self._daemon_env(), start_new_session=True,
        )
        log.close()

        def answers() -> bool:
            if self._mariadb is not None and self._mariadb.poll() is not None:
                raise SlurmStartError(f"mariadbd exited with {self._mariadb.returncode}\n{self._log_tail('mariadbd')}")
            return self._sql("SELECT 1").returncode == 0

        self._wait("MariaDB answers", answers, "mariadbd")
        password = secrets.token_hex(16)
        self._sql(
            "CREATE DATABASE IF NOT EXISTS slurm_acct_db;"
            "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1';"
            f"ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '{password}';"
            "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';",
            check=True,
        )
        self._db_password = password

    def _sql(self, statement: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["/usr/bin/mariadb", "--no-defaults", "-S", str(self.root / "mysql/mysqld.sock"), "-u", "root",
             "-e", statement],
            capture_output=True, text=True, check=False, timeout=30,
        )
        if check and result.returncode != 0:
            raise SlurmStartError(f"SQL failed: {result.stderr.strip()}")
        return result

    def _start_slurmdbd(self) -> None:
        dbd_conf = self.root / "etc/slurmdbd.conf"
        text = (
            "AuthType=auth/munge\n"
            f"AuthInfo=socket={self.munge_socket}\n"
            "DbdHost=localhost\n"
            f"DbdPort={self.ports['dbd']}\n"
            "SlurmUser=root\n"
            "StorageType=accounting_storage/mysql\n"
            "StorageHost=127.0.0.1\n"
            f"StoragePort={self.ports['mysql']}\n"
            "StorageUser=slurm\n"
            f"StoragePass={self._db_password}\n"
            "StorageLoc=slurm_acct_db\n"
            f"PidFile={self.root}/run/slurmdbd.pid\n"
            f"LogFile={self.root}/log/slurmdbd.log\n"
        )
        with contextlib.suppress(FileNotFoundError):
            dbd_conf.unlink()
        fd = os.open(dbd_conf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        # slurmdbd finds slurmdbd.conf next to $SLURM_CONF; slurm.conf is written later, so point at it now.
        self._spawn("slurmdbd", ["/usr/sbin/slurmdbd"])
        self._write_slurm_conf()
        self._wait("slurmdbd answers",
                   lambda: self.run("sacctmgr", "-n", "-P", "list", "cluster", check=False).returncode == 0,
                   "slurmdbd")
        if CLUSTER_NAME not in self.run("sacctmgr", "-n", "-P", "list", "cluster", "format=cluster").stdout.split():
            self.run("sacctmgr", "-i", "add", "cluster", CLUSTER_NAME)

    def _write_slurm_conf(self) -> None:
        r = self.root
        text = f"""\
ClusterName={CLUSTER_NAME}
SlurmctldHost={self.node}(127.0.0.1)
SlurmUser=root
SlurmctldPort={self.ports['ctld']}
SlurmdPort={self.ports['slurmd']}
AuthType=auth/munge
AuthInfo=socket={self.munge_socket},cred_expire={self.cred_expire}
StateSaveLocation={r}/state/ctld
SlurmdSpoolDir={r}/state/d
SlurmctldPidFile={r}/run/slurmctld.pid
SlurmdPidFile={r}/run/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin={"task/cgroup" if self.memory_enforcement == "cgroup" else "task/none"}
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
{"" if self.memory_enforcement == "cgroup" else "JobAcctGatherParams=OverMemoryKill"}
FirstJobId={self.first_job_id}
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort={self.ports['dbd']}
AccountingStoragePass={self.munge_socket}
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
MinJobAge={self.min_job_age}
MessageTimeout={self.message_timeout}
SlurmdTimeout={self.slurmd_timeout}
KillWait=2
ReturnToService=2
EnforcePartLimits=ALL
SchedulerParameters=sched_interval=2,bf_interval=5
SlurmdParameters=config_overrides
MpiDefault=none
MailProg=/bin/true
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} Sockets=1 CoresPerSocket={self.cpus} \
ThreadsPerCore=1 RealMemory={_node_memory_mb()} State=UNKNOWN
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=urgent Nodes={self.node} MaxTime=INFINITE State=UP PriorityTier=2
{self.extra_conf}"""
        self.conf.write_text(text)
        os.chmod(self.conf, 0o644)
        if self.memory_enforcement == "cgroup":  # the kernel's limit on the job's memory (cgroup v1)
            cgroup = self.conf.parent / "cgroup.conf"
            cgroup.write_text("CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nCgroupAutomount=no\n"
                              "ConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=0\n")
            os.chmod(cgroup, 0o644)

    def start_slurmd(self) -> None:
        self._spawn("slurmd", ["/usr/sbin/slurmd", "-f", str(self.conf), "-N", self.node])
        self.wait_node_usable()

    def wait_node_usable(self) -> None:
        def usable() -> bool:
            out = self.run("sinfo", "-h", "-N", "-o", "%T", check=False).stdout.split()
            return bool(out) and all(s.rstrip("*~#") in ("idle", "mixed", "allocated") for s in out)

        self._wait("the node is idle", usable, "slurmd")

    # ---- clients in other network namespaces (the sshd test login nodes) ---------------------
    def reachable_at(self, address: str, directory: Path) -> Path:
        """A slurm.conf for clients inside the test login nodes' namespaces, where this cluster's 127.0.0.1
        and its /var/tmp (the munge socket) are not theirs: slurmctld and slurmdbd listen on every address,
        so the clients are told ``address`` (the machine's on the hosts' bridge); munge credentials come
        from a second munged with the same key, its socket in ``directory`` (which the hosts see). The
        jobs still run on this machine's slurmd, as the user who submitted them."""
        directory.mkdir(mode=0o755, parents=True, exist_ok=True)
        os.chmod(directory, 0o755)
        relay = directory / "munge.socket.2"
        self.stop_relay()
        self._spawn("munged-relay", [
            "/usr/sbin/munged", f"--socket={relay}", f"--key-file={self.root}/munge/key/munge.key",
            f"--pid-file={self.root}/run/munged-relay.pid", f"--log-file={self.root}/log/munged-relay.log",
            f"--seed-file={self.root}/munge/lib/munged-relay.seed",
        ])

        def decodes_here() -> bool:  # a credential of the relay is one the cluster's own munged accepts
            enc = subprocess.run(["munge", "-n", "-S", str(relay)], capture_output=True, check=False)
            return enc.returncode == 0 and subprocess.run(["unmunge", "-S", str(self.munge_socket)], input=enc.stdout,
                                                          capture_output=True, check=False).returncode == 0

        self._wait("the relay munged", decodes_here, "munged-relay")
        text = (self.conf.read_text().replace(str(self.munge_socket), str(relay))
                .replace(f"SlurmctldHost={self.node}(127.0.0.1)", f"SlurmctldHost={self.node}({address})")
                .replace("AccountingStorageHost=localhost", f"AccountingStorageHost={address}"))
        conf = directory / "slurm.conf"
        conf.write_text(text)
        os.chmod(conf, 0o644)
        return conf

    def stop_relay(self) -> None:
        pid = self._pid("munged-relay")
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            _await_gone([pid], 10.0)

    # ---- processes -----------------------------------------------------------------------------
    def _spawn(self, name: str, argv: Sequence[str]) -> None:
        result = subprocess.run(list(argv), capture_output=True, text=True, env=self._daemon_env(), timeout=60,
                                check=False, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise SlurmStartError(f"{name} failed to start (rc {result.returncode}): {result.stderr.strip()}\n"
                                  f"{self._log_tail(name)}")

    def _wait(self, what: str, ready: object, daemon: str) -> None:
        assert callable(ready)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if ready():
                return
            pid = self._pid(daemon)
            if daemon != "mariadbd" and pid is None and (self.root / "run" / f"{daemon}.pid").exists():
                raise SlurmStartError(f"{daemon} died while waiting for {what}\n{self._log_tail(daemon)}")
            time.sleep(0.1)
        raise SlurmStartError(f"timed out waiting for {what}\n{self._log_tail(daemon)}")

    def _log_tail(self, daemon: str, lines: int = 15) -> str:
        path = self.root / "log" / f"{daemon}.log"
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return f"(no log at {path})"

    def _pid(self, daemon: str) -> int | None:
        """The pid in run/<daemon>.pid if that process is alive and runs the daemon's executable."""
        try:
            pid = int((self.root / "run" / f"{daemon}.pid").read_text().split()[0])
            exe = os.readlink(f"/proc/{pid}/exe")
            state = _proc_state(pid)
        except (OSError, ValueError, IndexError):
            return None
        if state == "Z" or Path(exe).name.split(" ")[0] not in _EXE_NAMES[daemon]:
            return None
        return pid

    def kill_slurmd(self) -> None:
        """Kill slurmd with SIGKILL, as a node failure does (its jobs' processes are left alone)."""
        pid = self._pid("slurmd")
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            _await_gone([pid], 10.0)

    def stop(self, *, purge: bool = True) -> None:
        pids = []
        for daemon in ("slurmd", "slurmctld", "slurmdbd", "mariadbd", "munged", "munged-relay"):
            pid = self._pid(daemon)
            if daemon == "mariadbd" and pid is None and self._mariadb is not None and self._mariadb.poll() is None:
                pid = self._mariadb.pid
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
                pids.append(pid)
                if daemon == "slurmctld":
                    _await_gone([pid], 10.0)  # slurmctld saves its state; let it go before slurmdbd
        _await_gone(pids, 15.0)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self._mariadb is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._mariadb.wait(timeout=5)
        strays = list(self._strays())
        for pid in strays:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _await_gone(strays, 5.0)
        if purge:
            shutil.rmtree(self.root, ignore_errors=True)

    def _strays(self) -> Iterator[int]:
        """slurmstepd (inherits the marker) and job processes (carry this cluster's SLURM_CONF)."""
        marker = f"{MARKER}={self.root}".encode()
        conf = f"SLURM_CONF={self.conf}".encode()
        me = os.getpid()
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == me:
                continue
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if marker in environ or (conf in environ and any(e.startswith(b"SLURM_JOB_ID=") for e in environ)):
                yield int(entry)


_EXE_NAMES = {
    "slurmd": ("slurmd", "slurmd-wlm"),
    "slurmctld": ("slurmctld", "slurmctld-wlm"),
    "slurmdbd": ("slurmdbd",),
    "mariadbd": ("mariadbd",),
    "munged": ("munged",),
    "munged-relay": ("munged",),
}


def _proc_state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0]


def _await_gone(pids: Sequence[int], timeout: float) -> None:
    """Wait until none of ``pids`` runs; a zombie counts as gone (PID 1 here reaps late)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                if _proc_state(pid) != "Z":
                    alive.append(pid)
            except OSError:
                pass
        if not alive:
            return
        time.sleep(0.05)


def memory_enforcement() -> str:
    """How the test cluster enforces ``--mem``: ``cgroup`` where cgroup v1's memory controller is mounted at
    /sys/fs/cgroup/memory and this process may make a cgroup there (task/cgroup with ConstrainRAMSpace: an
    allocation past --mem is killed by the kernel and Slurm 22.05 reports the job OUT_OF_MEMORY, exit 0:125),
    else ``overmemorykill`` (JobAcctGatherParams=OverMemoryKill, polled every second: the job is killed and
    Slurm 22.05 reports it FAILED 0:9, its batch step CANCELLED; an end no one can tell from a kill -9)."""
    memory = Path("/sys/fs/cgroup/memory")
    if not (memory / "memory.limit_in_bytes").exists():
        return "overmemorykill"
    probe = memory / f"dunscaith-probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return "overmemorykill"
    return "cgroup"


class SlurmUnavailable(Exception):
    """This machine cannot host the test cluster; the message names what is missing."""


_shared: SlurmTestCluster | None = None
_shared_failure: BaseException | None = None


def shared_cluster() -> SlurmTestCluster:
    """One cluster per test process, started on first use and stopped when the process ends.

    Both the integration tests and the scheduler contract suite use it, so a session that runs
    both pays the start once. Raises SlurmUnavailable (callers skip) when the packages are missing,
    except under CI, where that is an error; a start that fails is an error, and is not tried again in
    the same process.
    """
    global _shared, _shared_failure
    if _shared is not None:
        return _shared
    if _shared_failure is not None:
        raise RuntimeError("the Slurm test cluster failed to start earlier in this session") from _shared_failure
    missing = missing_components()
    if missing:
        message = "real Slurm test cluster unavailable, missing: " + ", ".join(missing)
        if os.environ.get("CI"):  # CI installs every component: a skip there would hide a broken install step
            raise RuntimeError(message)
        raise SlurmUnavailable(message)
    root = Path(tempfile.mkdtemp(prefix="dunscaith-slurm-test-", dir="/var/tmp"))
    cluster = SlurmTestCluster(root)
    try:
        cluster.start()
    except BaseException as exc:
        _shared_failure = exc
        shutil.rmtree(root, ignore_errors=True)
        raise
    atexit.register(stop_shared_cluster)  # whatever ends the process; the session hook is earlier
    _shared = cluster
    return cluster


def stop_shared_cluster() -> None:
    """Stop the shared cluster if one was started (idempotent)."""
    global _shared
    cluster, _shared = _shared, None
    if cluster is not None:
        keep = os.environ.get("DUNSCAITH_SLURM_TEST_KEEP") == "1"  # keep the root (logs) for a post-mortem
        cluster.stop(purge=not keep)
