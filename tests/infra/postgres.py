"""Start and stop a private PostgreSQL 15 for the tests (../shared/notes/postgres.md's recipe).

Installs nothing: the Debian package ``postgresql-15`` comes from ``.ci/install-packages``. The data
folder is a fresh ``mkdtemp`` owned by the ``postgres`` system user (initdb and postgres refuse to run
as root); every server command runs through ``runuser -u postgres --``. The server listens on
127.0.0.1 on a port picked free at start (tried again on "could not bind"), its socket in the folder,
with ``fsync`` and ``synchronous_commit`` on: a commit the tests see is a commit on disk.

Local connections are trusted (``--auth=trust``) except for the role ``secret_user``, whose password
the tests pass through a password file, so the password paths are exercised for real.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BIN = Path("/usr/lib/postgresql/15/bin")
SUPERUSER = "dunscaith"
PASSWORD_USER = "secret_user"
PASSWORD = "pw-5f1c-do-not-show-e9a2"  # the tests look for this text in every output


class PostgresUnavailable(Exception):
    """This machine cannot host the test server; the message names what is missing."""


def missing_components() -> list[str]:
    missing = [f"{BIN / exe} (postgresql-15)" for exe in ("initdb", "pg_ctl", "postgres")
               if not os.access(BIN / exe, os.X_OK)]
    if shutil.which("runuser") is None:
        missing.append("runuser (util-linux)")
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        missing.append("the postgres system user (postgresql-15)")
    if os.geteuid() != 0:
        missing.append("root (the server runs as the postgres user, started through runuser, as in CI)")
    return missing


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PostgresTestServer:
    root: Path
    port: int = 0
    listen: str = "127.0.0.1"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def sockdir(self) -> Path:
        return self.root / "sock"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def url(self, database: str, user: str = SUPERUSER) -> str:
        """A password-less URL, as ``records.url`` takes it."""
        return f"postgresql://{user}@{self.listen}:{self.port}/{database}"

    def _as_postgres(self, *argv: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(["runuser", "-u", "postgres", "--", *argv], capture_output=True, text=True,
                                timeout=timeout, check=False, cwd="/")
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: rc {result.returncode}: {result.stderr.strip()}\n{self._log_tail()}")
        return result

    def start(self) -> None:
        pg = pwd.getpwnam("postgres")
        os.chown(self.root, pg.pw_uid, pg.pw_gid)
        os.chmod(self.root, 0o755)  # clients (root, the tests) reach the socket folder; data stays 0700
        self._as_postgres(str(BIN / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                          "--encoding=UTF8", "--locale=C", "--no-instructions")
        self._as_postgres("mkdir", "-m", "0755", str(self.sockdir))
        hba = self.data / "pg_hba.conf"
        # The password role first: its lines win over the trust lines initdb wrote.
        rules = (f"host all {PASSWORD_USER} 127.0.0.1/32 scram-sha-256\n"
                 f"host all {PASSWORD_USER} 0.0.0.0/0 scram-sha-256\n"
                 "host all all 0.0.0.0/0 trust\n")
        hba.write_text(rules + hba.read_text())
        for _ in range(5):
            self.port = self.port or free_port()
            self._write_conf()
            started = self._as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                                        "-w", "-t", "30", "start", check=False)
            if started.returncode == 0:
                break
            if "could not bind" not in self._log_tail():
                raise RuntimeError(f"PostgreSQL did not start: {started.stderr.strip()}\n{self._log_tail()}")
            self.port = 0
        else:
            raise RuntimeError(f"PostgreSQL found no free port:\n{self._log_tail()}")
        self.psql("postgres", f"CREATE ROLE {PASSWORD_USER} LOGIN PASSWORD '{PASSWORD}'")

    def _write_conf(self) -> None:
        conf = (f"listen_addresses = '{self.listen}'\n"
                f"unix_socket_directories = '{self.sockdir}'\n"
                f"port = {self.port}\n"
                "fsync = on\nsynchronous_commit = on\n"
                "max_connections = 200\n")
        path = self.data / "postgresql.auto.conf"
        path.write_text(conf)
        pg = pwd.getpwnam("postgres")
        os.chown(path, pg.pw_uid, pg.pw_gid)

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def psql(self, database: str, sql: str) -> str:
        """Run SQL as the superuser over the socket (the tests' own setup and checks)."""
        result = subprocess.run([str(BIN.parent / "bin" / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                 "-h", str(self.sockdir), "-p", str(self.port), "-U", SUPERUSER, "-d", database,
                                 "-c", sql], capture_output=True, text=True, timeout=60, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"psql: {result.stderr.strip()}")
        return result.stdout.strip()

    def new_database(self, prefix: str = "t") -> str:
        name = f"{prefix}_{os.urandom(5).hex()}"
        self.psql("postgres", f"CREATE DATABASE {name}")
        self.psql(name, f"GRANT ALL ON SCHEMA public TO {PASSWORD_USER}")
        return name

    def stop(self, mode: str = "fast") -> None:
        self._as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self) -> None:
        """Every session ends (and with it every advisory lock); the server comes back on the same port."""
        self._as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-m", "fast",
                          "-w", "-t", "30", "restart")

    def server_pids(self) -> list[int]:
        """The postmaster and every process it started (backends, checkpointer, walwriter, ...)."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        found = [postmaster]
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                found.append(int(entry))
        return found

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """Every server process stopped (SIGSTOP) until the block ends: connections are accepted by the
        kernel and every byte is acknowledged, but nothing is answered. New backends forked meanwhile
        cannot start either (the postmaster is stopped)."""
        stopped = []
        for pid in self.server_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
        try:
            yield
        finally:
            for pid in stopped:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    def running(self) -> bool:
        return self._as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "status", check=False).returncode == 0

    def start_again(self) -> None:
        self._as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "30", "start")


def _require_components() -> None:
    missing = missing_components()
    if missing:
        message = "real PostgreSQL 15 test server unavailable, missing: " + ", ".join(missing)
        if os.environ.get("CI"):  # CI installs every component: a skip there would hide a broken install step
            raise RuntimeError(message)
        raise PostgresUnavailable(message)


_shared: PostgresTestServer | None = None
_shared_failure: BaseException | None = None


def shared_server() -> PostgresTestServer:
    """One server per test process, started on first use and stopped when the process ends.

    Raises PostgresUnavailable (callers skip) when the package is missing, except under CI, where that
    is an error; a start that fails is an error, and is not tried again in the same process.
    """
    global _shared, _shared_failure
    if _shared is not None:
        return _shared
    if _shared_failure is not None:
        raise RuntimeError("the PostgreSQL test server failed to start earlier in this session") from _shared_failure
    _require_components()
    server = PostgresTestServer(Path(tempfile.mkdtemp(prefix="dunscaith-pg-test-", dir="/var/tmp")))
    try:
        server.start()
    except BaseException as exc:
        _shared_failure = exc
        server.stop("immediate")
        shutil.rmtree(server.root, ignore_errors=True)
        raise
    atexit.register(stop_shared_server)
    _shared = server
    return server


def stop_shared_server() -> None:
    """Stop the shared server if one was started (idempotent); its folder goes with it."""
    global _shared
    server, _shared = _shared, None
    if server is not None:
        server.stop()
        if os.environ.get("DUNSCAITH_PG_TEST_KEEP") != "1":  # keep the folder (its log) for a post-mortem
            shutil.rmtree(server.root, ignore_errors=True)


@contextlib.contextmanager
def private_server(listen: str = "127.0.0.1") -> Iterator[PostgresTestServer]:
    """A server of its own, for a test that restarts or stops it (the shared one stays up).

    ``listen``: the one address it listens on; the test login nodes' bridge address
    (``SshHosts.bridge_address``) for clients inside their network namespaces, whose 127.0.0.1 is their own.
    """
    _require_components()
    server = PostgresTestServer(Path(tempfile.mkdtemp(prefix="dunscaith-pg-test-", dir="/var/tmp")), listen=listen)
    try:
        server.start()
        yield server
    finally:
        server.stop("immediate")
        for _ in range(50):
            if not server.running():
                break
            time.sleep(0.1)
        shutil.rmtree(server.root, ignore_errors=True)


PGBOUNCER = Path("/usr/sbin/pgbouncer")


@contextlib.contextmanager
def pgbouncer(server: PostgresTestServer, pool_mode: str) -> Iterator[str]:
    """A PgBouncer (Debian's ``pgbouncer``, from ``.ci/install-packages``) in front of ``server``, on
    127.0.0.1 and a free port, in ``pool_mode``; yields its host:port. Run as the postgres user (it
    refuses root); stopped by its pid file. PostgresUnavailable where it is not installed (not under CI)."""
    if not os.access(PGBOUNCER, os.X_OK):
        message = f"{PGBOUNCER} (pgbouncer) is not installed"
        if os.environ.get("CI"):
            raise RuntimeError(message)
        raise PostgresUnavailable(message)
    folder = Path(tempfile.mkdtemp(prefix="dunscaith-pgbouncer-", dir="/var/tmp"))
    port = free_port()
    ini = folder / "pgbouncer.ini"
    ini.write_text(f"[databases]\n* = host={server.listen} port={server.port}\n\n[pgbouncer]\n"
                   f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
                   f"auth_type = trust\nauth_file = {folder}/users.txt\npool_mode = {pool_mode}\n"
                   f"logfile = {folder}/pgbouncer.log\npidfile = {folder}/pgbouncer.pid\n"
                   # dunscaith sends its session settings in `options`; a pooler set up for it passes them
                   "ignore_startup_parameters = extra_float_digits,options\n")
    (folder / "users.txt").write_text(f'"{SUPERUSER}" ""\n')
    pg = pwd.getpwnam("postgres")
    for path in (folder, ini, folder / "users.txt"):
        os.chown(path, pg.pw_uid, pg.pw_gid)
    os.chmod(folder, 0o755)
    try:
        started = subprocess.run(["runuser", "-u", "postgres", "--", str(PGBOUNCER), "-d", str(ini)],
                                 capture_output=True, text=True, timeout=30, check=False, cwd="/")
        if started.returncode != 0:
            raise RuntimeError(f"pgbouncer did not start: {started.stderr.strip()}")
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"pgbouncer does not listen on {port}") from None
                time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        with contextlib.suppress(OSError, ValueError):
            pid = int((folder / "pgbouncer.pid").read_text().split()[0])
            if Path(f"/proc/{pid}/exe").resolve() == PGBOUNCER:
                os.kill(pid, 15)
                for _ in range(100):
                    if not Path(f"/proc/{pid}").exists():
                        break
                    time.sleep(0.05)
        shutil.rmtree(folder, ignore_errors=True)
