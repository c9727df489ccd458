"""Start and stop a private single-node Son of Grid Engine 8.1.9 (qmaster + execd) for the tests.

Installs nothing: the Debian packages come from ``.ci/install-packages``. Everything lives under one
root folder of its own (it is SGE_ROOT: the cell, its classic spool, the accounting file), on ports
picked free at start, so it never touches /var/lib/gridengine/default or a cluster of another session.
Written from ../shared/notes/gridengine.md:

- ``$ROOT/{bin,lib,utilbin,util}`` link to the packaged ones; ``common/bootstrap`` with classic spooling
  and ``security_mode none``; ``common/host_aliases`` maps this host to ``localhost`` (127.0.0.1's reverse
  name), without which every client is refused;
- the spool made as Debian's ``init_cluster`` makes it (``spoolinit`` + ``spooldefaults``), as sgeadmin;
- qmaster and execd started under ``env -i`` (a job inherits execd's whole environment); the global
  configuration, the scheduler's, the host, host group, parallel environment ``smp`` and queue ``all.q``
  loaded with ``qconf -M*/-A*`` from files: accounting flushed at once, a scheduling run a second,
  no load threshold (the machine is shared), jobs as any user (``min_uid 0``), h_vmem and h_rt requestable.

Stopping: ``qdel -u '*'``, ``qconf -ke all``, ``qconf -km``, then the pids this root started that are still
there, checked against their ``/proc/PID/environ``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

MARKER = "DUNSCAITH_GRIDENGINE_TEST_ROOT"  # set on both daemons (and so on every job and shepherd)
CELL = "dunscaith"
PE = "smp"

# Executable → Debian package that ships it, for the skip message.
COMPONENTS: Mapping[str, str] = {
    "/usr/sbin/sge_qmaster": "gridengine-master",
    "/usr/sbin/sge_execd": "gridengine-exec",
    "/usr/lib/gridengine/spoolinit": "gridengine-master",
    "/usr/lib/gridengine/spooldefaults": "gridengine-master",
    "/usr/lib/gridengine/qsub": "gridengine-client",
    "/usr/lib/gridengine/qacct": "gridengine-client",
}
_PACKAGED = Path("/var/lib/gridengine")
_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


class GridEngineStartError(RuntimeError):
    """A daemon did not come up; the message carries what it said."""


class GridEngineUnavailable(Exception):
    """This machine cannot host the test cluster; the message names what is missing."""


def missing_components() -> list[str]:
    missing = [f"{path} ({package})" for path, package in COMPONENTS.items() if not os.access(path, os.X_OK)]
    if not (_PACKAGED / "util").is_dir():
        missing.append(f"{_PACKAGED}/util (gridengine-common)")
    if os.geteuid() != 0:
        missing.append("root (the daemons run as root, as in CI)")
    return missing


def _free_port_pair() -> int:
    """A port P with P and P+1 both free (qmaster, execd)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port < 65000:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                try:
                    s.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return port
    raise GridEngineStartError("no two free ports side by side")


def _bootstrap(root: Path) -> str:
    return f"""admin_user              sgeadmin
default_domain          none
ignore_fqdn             true
spooling_method         classic
spooling_lib            libspoolc
spooling_params         {root}/{CELL}/common;{root}/{CELL}/spool/qmaster
binary_path             /usr/sbin
qmaster_spool_dir       {root}/{CELL}/spool/qmaster
security_mode           none
listener_threads        2
worker_threads          2
scheduler_threads       1
"""


def _global_conf(root: Path) -> str:
    text = Path("/usr/share/gridengine/default-configuration").read_text()
    replace = {
        "execd_spool_dir": f"{root}/{CELL}/spool/execd",
        "mailer": "/bin/true",
        "min_uid": "0",
        "min_gid": "0",
        "load_report_time": "00:00:05",
        "reporting_params": (
            "accounting=true reporting=true flush_time=00:00:01 joblog=true "
            "sharelog=00:00:00 accounting_flush_time=00:00:00"
        ),
    }
    lines = []
    for line in text.splitlines():
        key = line.split()[0] if line.strip() and not line.startswith("#") else ""
        lines.append(f"{key:<22} {replace[key]}" if key in replace else line)
    return "\n".join(lines) + "\n"


_SCHED = """algorithm                         default
schedule_interval                 0:0:1
maxujobs                          0
queue_sort_method                 load
job_load_adjustments              NONE
load_adjustment_decay_time        0:0:0
load_formula                      np_load_avg
schedd_job_info                   false
flush_submit_sec                  1
flush_finish_sec                  1
params                            none
reprioritize_interval             0:0:0
halftime                          168
usage_weight_list                 cpu=1.000000,mem=0.000000,io=0.000000
compensation_factor               5.000000
weight_user                       0.250000
weight_project                    0.250000
weight_department                 0.250000
weight_job                        0.250000
weight_tickets_functional         0
weight_tickets_share              0
share_override_tickets            TRUE
share_functional_shares           TRUE
max_functional_jobs_to_schedule   200
report_pjob_tickets               TRUE
max_pending_tasks_per_job         50
halflife_decay_list               none
policy_hierarchy                  OFS
weight_ticket                     0.500000
weight_waiting_time               0.000000
weight_deadline                   3600000.000000
weight_urgency                    0.500000
weight_priority                   0.000000
max_reservation                   0
default_duration                  INFINITY
"""


def _queue(host: str, slots: int) -> str:
    return f"""qname                 all.q
hostlist              @allhosts
seq_no                0
load_thresholds       NONE
suspend_thresholds    NONE
nsuspend              1
suspend_interval      00:05:00
priority              0
min_cpu_interval      00:05:00
processors            UNDEFINED
qtype                 BATCH INTERACTIVE
ckpt_list             NONE
pe_list               {PE}
rerun                 FALSE
slots                 {slots}
tmpdir                /tmp
shell                 /bin/bash
prolog                NONE
epilog                NONE
shell_start_mode      posix_compliant
starter_method        NONE
suspend_method        NONE
resume_method         NONE
terminate_method      NONE
notify                00:00:10
owner_list            NONE
user_lists            NONE
xuser_lists           NONE
subordinate_list      NONE
complex_values        NONE
projects              NONE
xprojects             NONE
calendar              NONE
initial_state         default
s_rt                  INFINITY
h_rt                  INFINITY
s_cpu                 INFINITY
h_cpu                 INFINITY
s_fsize               INFINITY
h_fsize               INFINITY
s_data                INFINITY
h_data                INFINITY
s_stack               INFINITY
h_stack               INFINITY
s_core                INFINITY
h_core                INFINITY
s_rss                 INFINITY
h_rss                 INFINITY
s_vmem                INFINITY
h_vmem                INFINITY
"""


_PE_TEXT = f"""pe_name            {PE}
slots              999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $pe_slots
control_slaves     TRUE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary TRUE
qsort_args         NONE
"""


def _exec_host(host: str) -> str:
    return f"""hostname              {host}
load_scaling          NONE
complex_values        NONE
user_lists            NONE
xuser_lists           NONE
projects              NONE
xprojects             NONE
usage_scaling         NONE
report_variables      NONE
"""


@dataclass
class GridEngineTestCluster:
    root: Path
    slots: int = 0  # 0: the machine's cpus, at least 8 (the tests' tasks are short shells: a 200-task array
    # runs 8 at a time in a quarter of the time 2 at a time takes, and no test waits on a full queue)

    def __post_init__(self) -> None:
        self.port = _free_port_pair()
        self.host = socket.gethostname()
        if self.slots <= 0:
            self.slots = max(8, os.cpu_count() or 8)

    @property
    def env(self) -> dict[str, str]:
        """What every client needs (a cluster's ``env`` in dunscaith's configuration)."""
        return {
            "SGE_ROOT": str(self.root),
            "SGE_CELL": CELL,
            "SGE_QMASTER_PORT": str(self.port),
            "SGE_EXECD_PORT": str(self.port + 1),
        }

    @property
    def common(self) -> Path:
        return self.root / CELL / "common"

    @property
    def accounting(self) -> Path:
        return self.common / "accounting"

    def client_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def _daemon_env(self) -> dict[str, str]:
        return {"PATH": _PATH, "HOME": "/root", "LANG": "C", MARKER: str(self.root), **self.env}

    def run(
        self, *argv: str, check: bool = True, timeout: float = 30.0, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            list(argv), env=self.client_env(), capture_output=True, text=True, timeout=timeout, check=False, input=stdin
        )
        if check and done.returncode != 0:
            raise GridEngineStartError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")
        return done

    # ---- start -----------------------------------------------------------------------------------
    def start(self) -> None:
        self._write_cell()
        self._init_spool()
        self._start_qmaster()
        self._configure()
        self.start_execd()
        self._wait("the queue all.q to take jobs", self._queue_ready, 60.0)

    def _write_cell(self) -> None:
        for name in ("bin", "lib", "utilbin", "util"):
            (self.root / name).symlink_to(_PACKAGED / name)
        for sub in ("common", "spool/qmaster", "spool/execd", "conf"):
            (self.root / CELL / sub).mkdir(parents=True, exist_ok=True)
        (self.common / "bootstrap").write_text(_bootstrap(self.root))
        # 127.0.0.1 (this host's address here) resolves back to "localhost": one name for both
        (self.common / "host_aliases").write_text(f"{self.host} localhost\n")
        (self.common / "act_qmaster").write_text(f"{self.host}\n")
        conf = self.root / CELL / "conf"
        (conf / "global").write_text(_global_conf(self.root))
        (conf / "sched").write_text(_SCHED)
        (conf / "host").write_text(_exec_host(self.host))
        (conf / "allhosts").write_text(f"group_name @allhosts\nhostlist {self.host}\n")
        (conf / "pe").write_text(_PE_TEXT)
        (conf / "queue").write_text(_queue(self.host, self.slots))
        subprocess.run(["chown", "-R", "sgeadmin:sgeadmin", str(self.root / CELL)], check=True)
        os.chmod(self.root, 0o755)

    def _as_admin(self, *argv: str) -> None:
        env = {"PATH": _PATH, **self.env}
        done = subprocess.run(
            ["setpriv", "--reuid=sgeadmin", "--regid=sgeadmin", "--init-groups", *argv],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise GridEngineStartError(f"{' '.join(argv)}: exit {done.returncode}: {done.stdout} {done.stderr}")

    def _init_spool(self) -> None:
        lib = "/usr/lib/gridengine"
        spool = f"{self.common};{self.root}/{CELL}/spool/qmaster"
        self._as_admin(f"{lib}/spoolinit", "classic", "libspoolc", spool, "init")
        resources = _PACKAGED / "util" / "resources"
        for what, source in (
            ("configuration", str(self.root / CELL / "conf" / "global")),
            ("complexes", str(resources / "centry")),
            ("usersets", str(resources / "usersets")),
        ):
            self._as_admin(f"{lib}/spooldefaults", what, source)
        self._as_admin(f"{lib}/spooldefaults", "managers", "root", "sgeadmin")
        self._as_admin(f"{lib}/spooldefaults", "adminhosts", self.host)
        self._as_admin(f"{lib}/spooldefaults", "submithosts", self.host)

    def _spawn(self, program: str) -> None:
        subprocess.run(
            ["env", "-i", *(f"{k}={v}" for k, v in self._daemon_env().items()), program],
            cwd=str(self.root),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )

    def _start_qmaster(self) -> None:
        self._spawn("/usr/sbin/sge_qmaster")
        self._wait("sge_qmaster to answer", lambda: self.run("qconf", "-sm", check=False).returncode == 0, 30.0)

    def _configure(self) -> None:
        conf = self.root / CELL / "conf"
        for flag in ("-ah", "-as"):  # admin and submit host (spooldefaults' may be missing)
            self.run("qconf", flag, self.host, check=False)
        self.run("qconf", "-Msconf", str(conf / "sched"))
        self.run("qconf", "-Ae", str(conf / "host"))
        self.run("qconf", "-Ahgrp", str(conf / "allhosts"))
        self.run("qconf", "-Ap", str(conf / "pe"))
        self.run("qconf", "-Aq", str(conf / "queue"))
        # h_vmem and h_rt requestable, not consumable (a consumable h_vmem with default 0 kills every job)
        complexes = self.run("qconf", "-sc").stdout
        (conf / "complexes").write_text(complexes)

    def start_execd(self) -> None:
        self._spawn("/usr/sbin/sge_execd")

    def _queue_ready(self) -> bool:
        done = self.run("qstat", "-f", "-q", "all.q", check=False)
        lines = [ln.split() for ln in done.stdout.splitlines() if ln.startswith("all.q@")]
        return bool(lines) and len(lines[0]) == 5  # no state letters after the arch column

    def _wait(self, what: str, ready: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline:
                raise GridEngineStartError(f"timed out waiting for {what}: {self._messages()}")
            time.sleep(0.1)

    def _messages(self) -> str:
        tails = []
        for path in (self.root / CELL / "spool" / "qmaster" / "messages", Path("/tmp/qmaster_messages")):
            if path.exists():
                tails.append(" | ".join(path.read_text(errors="replace").splitlines()[-5:]))
        return "; ".join(tails) or "(no messages)"

    # ---- faults ------------------------------------------------------------------------------------
    def qmaster_pid(self) -> int | None:
        pid_file = self.root / CELL / "spool" / "qmaster" / "qmaster.pid"
        with contextlib.suppress(OSError, ValueError):
            return int(pid_file.read_text().split()[0])
        return None

    # ---- stop --------------------------------------------------------------------------------------
    def stop(self, *, purge: bool = True) -> None:
        self.run("qdel", "-u", "*", check=False)
        self.run("qconf", "-ke", "all", check=False)
        self.run("qconf", "-km", check=False)
        pids = list(self._ours())
        deadline = time.monotonic() + 15
        while pids and time.monotonic() < deadline:
            time.sleep(0.1)
            pids = list(self._ours())
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if purge:
            shutil.rmtree(self.root, ignore_errors=True)

    def _ours(self) -> list[int]:
        """The processes whose environment names this root (daemons, shepherds, jobs)."""
        mark = f"{MARKER}={self.root}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                if mark in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
        return found


_shared: GridEngineTestCluster | None = None
_shared_failure: BaseException | None = None


def shared_cluster() -> GridEngineTestCluster:
    """One cluster per test process, started on first use and stopped when the process ends.

    Raises GridEngineUnavailable (callers skip) when the packages are missing, except under CI, where
    that is an error; a start that fails is an error, and is not tried again in the same process."""
    global _shared, _shared_failure
    if _shared is not None:
        return _shared
    if _shared_failure is not None:
        raise RuntimeError("the Grid Engine test cluster failed to start earlier in this session") from _shared_failure
    missing = missing_components()
    if missing:
        message = "real Grid Engine test cluster unavailable, missing: " + ", ".join(missing)
        if os.environ.get("CI"):  # CI installs every component: a skip there would hide a broken install step
            raise RuntimeError(message)
        raise GridEngineUnavailable(message)
    root = Path(tempfile.mkdtemp(prefix="dunscaith-sge-test-", dir="/var/tmp"))
    cluster = GridEngineTestCluster(root)
    try:
        cluster.start()
    except BaseException as exc:
        _shared_failure = exc
        with contextlib.suppress(Exception):
            cluster.stop()
        raise
    atexit.register(stop_shared_cluster)
    _shared = cluster
    return cluster


def stop_shared_cluster() -> None:
    """Stop the shared cluster if one was started (idempotent)."""
    global _shared
    cluster, _shared = _shared, None
    if cluster is not None:
        cluster.stop(purge=os.environ.get("DUNSCAITH_GRIDENGINE_TEST_KEEP") != "1")
