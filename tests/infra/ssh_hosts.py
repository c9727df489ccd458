"""Real sshd "login nodes" for the forwarding tests, each in namespaces of its own (../shared/notes/ssh-hosts.md).

Each host has its own network namespace (an address on a private /24, no default route), its own
hostname, ``/etc/machine-id`` and ``/var/tmp`` (UTS, mount and PID namespaces), and its own sshd; the
home directories, ``/usr``, ``/opt`` and the checkout are the machine's, so every host shares them as
login nodes share an NFS home. Two test users are made for the session (``dsu<pid>`` with bash and
``dst<pid>`` with tcsh, both with keys, ``~/.ssh/config`` and known_hosts for every host), and the
project is installed in a venv of the system python where they can run it.

Everything carries this session's tag (``ds<pid>``): namespace, bridge, veth and user names, the
state directory, and a /24 picked unused from 10.160-10.250, so several sessions can run side by side.
``stop()`` (also at exit) kills each host's namespace launcher (its init and everything in the PID
namespace die with it), deletes the namespaces, the bridge and the users; ``start()`` first clears the
leftovers of a session whose process is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]  # the checkout
STATE = Path("/var/lib/dunscaith-test-hosts")
VENVS = Path("/opt/dunscaith-tests")
SYSTEM_PYTHON = "/usr/bin/python3"
INIT = Path(__file__).with_name("ssh_host_init.py")
COMPONENTS = {"/usr/sbin/sshd": "openssh-server", "/usr/bin/ssh": "openssh-client", "/usr/bin/ssh-keygen":
              "openssh-client", "/usr/bin/unshare": "util-linux", "/usr/bin/nsenter": "util-linux",
              "/usr/sbin/ip": "iproute2", "/usr/bin/tcsh": "tcsh", SYSTEM_PYTHON: "python3"}
NOISE = "startup-file noise that is not a frame"


class SshHostsUnavailable(RuntimeError):
    """The machine cannot host the test login nodes; the message names what is missing."""


def missing_components() -> list[str]:
    missing = [f"{path} ({package})" for path, package in COMPONENTS.items() if not os.access(path, os.X_OK)]
    if os.geteuid() != 0:
        missing.append("root (namespaces, users and sshd need it)")
    return missing


def _run(*argv: str, check: bool = True, quiet: bool = False, **kw: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(argv), capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    if check and done.returncode != 0 and not quiet:
        raise SshHostsUnavailable(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    return done  # type: ignore[no-any-return]


@dataclass
class Host:
    name: str  # login1, login2, ...
    address: str
    netns: str
    veth: str
    directory: Path
    launcher: subprocess.Popen[bytes] | None = None

    @property
    def init_pid(self) -> int:
        """The host's PID 1 (the launcher's only child), for nsenter."""
        assert self.launcher is not None
        children = _run("ps", "-o", "pid=", "--ppid", str(self.launcher.pid)).stdout.split()
        return int(children[0])


@dataclass
class User:
    name: str
    home: Path
    shell: str
    key: Path  # a root-readable copy of the user's private key, for clients run by the test process


@dataclass
class SshHosts:
    count: int = 3
    tag: str = field(default_factory=lambda: f"ds{os.getpid()}")
    hosts: list[Host] = field(default_factory=list)
    users: dict[str, User] = field(default_factory=dict)
    subnet: str = ""
    started: bool = False

    # ---- paths ------------------------------------------------------------------------------------

    @property
    def state(self) -> Path:
        return STATE / self.tag

    @property
    def client_config(self) -> Path:
        """ssh config for the test process (root, in the machine's namespace) to reach the hosts as the user."""
        return self.state / "client_config"

    @property
    def known_hosts(self) -> Path:
        return self.state / "known_hosts"

    @property
    def user(self) -> User:
        return self.users["bash"]

    @property
    def tcsh_user(self) -> User:
        return self.users["tcsh"]

    @property
    def venv(self) -> Path:
        digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + str(ROOT).encode()).hexdigest()[:16]
        return VENVS / f"venv-{digest}"

    @property
    def dunscaith(self) -> str:
        return str(self.venv / "bin" / "dunscaith")

    @property
    def bridge_address(self) -> str:
        """The machine's own address on the hosts' bridge: a service listening there is reachable from every
        host (their 127.0.0.1 is their own), and from nowhere else."""
        return f"{self.subnet}.1"

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)

    # ---- start ------------------------------------------------------------------------------------

    def start(self) -> SshHosts:
        missing = missing_components()
        if missing:
            raise SshHostsUnavailable("the sshd test hosts need: " + ", ".join(missing))
        STATE.mkdir(parents=True, exist_ok=True)
        os.chmod(STATE, 0o755)
        clear_stale()
        atexit.register(self.stop)
        try:
            self.state.mkdir(mode=0o755)
            with _machine_lock():
                self.subnet = _free_subnet()
                _run("ip", "link", "add", self._bridge, "type", "bridge")
                _run("ip", "addr", "add", f"{self.subnet}.1/24", "dev", self._bridge)
                _run("ip", "link", "set", self._bridge, "up")
            self._install()
            self._make_users()
            for i in range(1, self.count + 1):
                self.hosts.append(self._make_host(i))
            self._write_keys_and_configs()
            for host in self.hosts:
                self._launch(host)
            for host in self.hosts:
                self._await_ready(host)
            self.started = True
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def _bridge(self) -> str:
        return f"{self.tag}b"

    def _install(self) -> None:
        """A venv of the system python with the project installed editable (the users cannot read /root)."""
        VENVS.mkdir(parents=True, exist_ok=True)
        os.chmod(VENVS, 0o755)
        with open(VENVS / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            stamp = self.venv / ".installed"
            for old in VENVS.glob("venv-*"):  # this checkout's venvs of an older pyproject.toml
                marker = old / ".checkout"
                if old != self.venv and marker.exists() and marker.read_text() == str(ROOT):
                    shutil.rmtree(old, ignore_errors=True)
            if not stamp.exists():
                shutil.rmtree(self.venv, ignore_errors=True)
                _run(SYSTEM_PYTHON, "-m", "venv", str(self.venv))
                _run(str(self.venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", "-e",
                     str(ROOT), timeout=900)
                (self.venv / ".checkout").write_text(str(ROOT))
                stamp.touch()
        # The users cannot write __pycache__ in the checkout: compile it for them (same 3.11 magic).
        _run(SYSTEM_PYTHON, "-m", "compileall", "-q", *(str(ROOT / p) for p in
                                                        ("domain", "ports", "adapters", "entrypoints")),
             check=False)

    def _make_users(self) -> None:
        for kind, shell in (("bash", "/bin/bash"), ("tcsh", "/usr/bin/tcsh")):
            name = f"dsu{os.getpid()}" if kind == "bash" else f"dst{os.getpid()}"
            _run("useradd", "-m", "-s", shell, "-c", f"dunscaith test {self.tag}", name)
            _run("usermod", "-p", "*", name)  # UsePAM no refuses a locked ("!") account
            home = Path(pwd.getpwnam(name).pw_dir)
            ssh = home / ".ssh"
            self._as(name, "mkdir", "-m", "700", str(ssh))
            self._as(name, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(ssh / "id_ed25519"))
            copy = self.state / f"{name}.key"
            shutil.copyfile(ssh / "id_ed25519", copy)
            os.chmod(copy, 0o600)
            self.users[kind] = User(name, home, shell, copy)
            # Supervisors poll twice a second here, so a job's end is seen in a test's time.
            config = home / ".config" / "dunscaith"
            self._as(name, "mkdir", "-p", "-m", "700", str(config))
            (config / "config.toml").write_text("[supervise]\npoll = 0.5\n")
            shutil.chown(config / "config.toml", name, name)
            # Startup files that print: the frames must keep the command's output apart from them.
            rc = ".bashrc" if kind == "bash" else ".tcshrc"
            # At the top: Debian's .bashrc returns early when not interactive.
            startup = home / rc
            before = startup.read_text() if startup.exists() else ""
            startup.write_text(f"echo '{NOISE}'\n" + before)
            shutil.chown(startup, name, name)

    def _as(self, user: str, *argv: str) -> None:
        _run("runuser", "-u", user, "--", *argv)

    def _make_host(self, i: int) -> Host:
        host = Host(f"login{i}", f"{self.subnet}.{10 + i}", f"{self.tag}-login{i}", f"{self.tag}v{i}",
                    self.state / f"login{i}")
        host.directory.mkdir(mode=0o755)
        (host.directory / "var-tmp").mkdir()
        os.chmod(host.directory / "var-tmp", 0o1777)
        (host.directory / "machine-id").write_text(hashlib.md5(f"{self.tag}{host.name}".encode()).hexdigest() + "\n")
        (host.directory / "hostname").write_text(host.name + "\n")
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host.directory / "ssh_host_ed25519_key"))
        _run("ip", "netns", "add", host.netns)
        _run("ip", "link", "add", host.veth, "type", "veth", "peer", "name", "eth0", "netns", host.netns)
        _run("ip", "link", "set", host.veth, "master", self._bridge)
        _run("ip", "link", "set", host.veth, "up")
        inside = ("ip", "netns", "exec", host.netns)
        _run(*inside, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", check=False)
        _run(*inside, "ip", "link", "set", "lo", "up")
        _run(*inside, "ip", "addr", "add", f"{host.address}/24", "dev", "eth0")
        _run(*inside, "ip", "link", "set", "eth0", "up")
        (host.directory / "sshd_config").write_text(
            f"ListenAddress {host.address}:22\n"
            f"HostKey {host.directory}/ssh_host_ed25519_key\n"
            "PidFile none\n"
            f"AuthorizedKeysFile {self.state}/authorized_keys/%u\n"
            "PermitRootLogin no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "UsePAM no\nUseDNS no\nMaxStartups 200:30:400\nMaxSessions 100\n"
            "Subsystem sftp internal-sftp\n")
        return host

    def _write_keys_and_configs(self) -> None:
        keys = self.state / "authorized_keys"
        keys.mkdir(mode=0o755)
        for user in self.users.values():
            pub = (user.home / ".ssh" / "id_ed25519.pub").read_text()
            (keys / user.name).write_text(pub)
            os.chmod(keys / user.name, 0o644)
        self.write_known_hosts()
        blocks = "".join(f"Host {h.name}\n    HostName {h.address}\n" for h in self.hosts)
        for user in self.users.values():
            config = user.home / ".ssh" / "config"
            config.write_text(blocks + "Host *\n    StrictHostKeyChecking yes\n    IdentityFile ~/.ssh/id_ed25519\n")
            shutil.chown(config, user.name, user.name)
            os.chmod(config, 0o600)
        self.client_config.write_text(
            blocks + f"Host *\n    User {self.user.name}\n    IdentityFile {self.user.key}\n"
            f"    UserKnownHostsFile {self.known_hosts}\n    GlobalKnownHostsFile /dev/null\n"
            "    StrictHostKeyChecking yes\n    BatchMode yes\n    ControlMaster no\n    ControlPath none\n"
            "    ConnectTimeout 10\n")

    def write_known_hosts(self) -> None:
        """known_hosts of every host's current key, for the users and the test process."""
        lines = "".join(f"{h.name},{h.address} {(h.directory / 'ssh_host_ed25519_key.pub').read_text()}"
                        for h in self.hosts)
        self.known_hosts.write_text(lines)
        for user in self.users.values():
            path = user.home / ".ssh" / "known_hosts"
            path.write_text(lines)
            shutil.chown(path, user.name, user.name)
            os.chmod(path, 0o600)

    def _launch(self, host: Host) -> None:
        log = open(host.directory / "init.log", "wb")  # noqa: SIM115 - the launcher keeps it
        host.launcher = subprocess.Popen(
            ["ip", "netns", "exec", host.netns, "unshare", "--uts", "--ipc", "--mount", "--propagation", "slave",
             "--pid", "--fork", "--kill-child", "--mount-proc", "--", SYSTEM_PYTHON, str(INIT), host.name,
             str(host.directory)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True)
        log.close()

    def _await_ready(self, host: Host) -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection((host.address, 22), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or (host.launcher and host.launcher.poll() is not None):
                    raise SshHostsUnavailable(f"{host.name}: sshd did not come up: {self._logs(host)}") from None
                time.sleep(0.05)
        done = self.ssh(host.name, "hostname; cat /etc/machine-id", timeout=30)
        expected = [host.name, (host.directory / "machine-id").read_text().strip()]
        if done.returncode != 0 or done.stdout.split()[-2:] != expected:
            raise SshHostsUnavailable(f"{host.name}: the check login failed: rc {done.returncode} "
                                      f"{done.stdout!r} {done.stderr!r} {self._logs(host)}")

    def _logs(self, host: Host) -> str:
        text = ""
        for name in ("init.log", "sshd.log"):
            with contextlib.suppress(OSError):
                text += f"[{name}] " + (host.directory / name).read_text()[-800:]
        return text

    # ---- use --------------------------------------------------------------------------------------

    def ssh_argv(self, host: str, user: User | None = None) -> list[str]:
        user = user or self.user
        return ["ssh", "-F", str(self.client_config), "-i", str(user.key), "-l", user.name, host]

    def ssh(self, host: str, command: str, user: User | None = None, timeout: float = 60,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run ``command`` (one shell line) on ``host`` as the test user, the way a user logs in."""
        return subprocess.run([*self.ssh_argv(host, user), command], capture_output=True, text=True,
                              timeout=timeout, input=input, stdin=None if input is not None else subprocess.DEVNULL)

    def popen(self, host: str, command: str, user: User | None = None, **kw: Any) -> subprocess.Popen[bytes]:
        """``ssh host command`` started, with ``subprocess.Popen``'s keyword arguments (bytes streams)."""
        return subprocess.Popen([*self.ssh_argv(host, user), command], **kw)

    def popen_text(self, host: str, command: str, user: User | None = None, **kw: Any) -> subprocess.Popen[str]:
        """``popen`` with text streams."""
        return subprocess.Popen([*self.ssh_argv(host, user), command], text=True, **kw)

    def inside(self, host: str, *argv: str, user: str | None = None,
               check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` in the host's namespaces (as root, or as ``user``), without ssh."""
        cmd = ["nsenter", "-t", str(self.host(host).init_pid), "-a"]
        if user is not None:
            cmd += ["runuser", "-u", user, "--"]
        return _run(*cmd, *argv, check=check)

    def kill_session_sshd(self, host: str, user: User | None = None) -> int:
        """SIGKILL the sshd child serving ``user``'s sessions on ``host`` (one way a connection drops)."""
        user = user or self.user
        found = self.inside(host, "pgrep", "-f", f"^sshd: {user.name}@notty", check=False).stdout.split()
        for pid in found:
            self.inside(host, "kill", "-KILL", pid, check=False)
        return len(found)

    def cut_link(self, host: str) -> None:
        """The host's link goes down: no FIN, no RST, the connection simply stops (another way)."""
        _run("ip", "netns", "exec", self.host(host).netns, "ip", "link", "set", "eth0", "down")

    def restore_link(self, host: str) -> None:
        h = self.host(host)
        _run("ip", "netns", "exec", h.netns, "ip", "link", "set", "eth0", "up")
        _run("ip", "netns", "exec", h.netns, "ip", "addr", "replace", f"{h.address}/24", "dev", "eth0")

    def change_host_key(self, host: str) -> None:
        """A new host key in place (known_hosts keeps the old one); sshd uses it on the next connection."""
        key = self.host(host).directory / "ssh_host_ed25519_key"
        key.unlink()
        key.with_suffix(".pub").unlink()
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key))

    def take_down(self, host: str) -> None:
        """The host goes down at once (its init, and so every process in it, is killed); its disk stays."""
        h = self.host(host)
        if h.launcher is not None and h.launcher.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(h.launcher.pid, signal.SIGKILL)  # --kill-child: init dies, then its PID namespace
            h.launcher.wait(timeout=10)

    def bring_up(self, host: str) -> None:
        """A host taken down boots again, with its own /var/tmp as it was (as after a reboot)."""
        h = self.host(host)
        if h.launcher is None or h.launcher.poll() is not None:
            self._launch(h)
            self._await_ready(h)

    def processes(self, host: str, pattern: str) -> list[str]:
        return self.inside(host, "pgrep", "-a", "-f", pattern, check=False).stdout.splitlines()

    # ---- stop -------------------------------------------------------------------------------------

    def stop(self) -> None:
        for host in self.hosts:
            if host.launcher is not None and host.launcher.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(host.launcher.pid, signal.SIGKILL)  # --kill-child: init dies, then its namespace
                with contextlib.suppress(subprocess.TimeoutExpired):
                    host.launcher.wait(timeout=10)
        _remove_tagged(self.tag)
        self.hosts.clear()
        self.users.clear()
        self.started = False


def _machine_lock() -> contextlib.AbstractContextManager[IO[str]]:
    @contextlib.contextmanager
    def held() -> Iterator[IO[str]]:
        with open(STATE / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield lock
    return held()


def _free_subnet() -> str:
    used = set(re.findall(r"inet (10\.\d+\.\d+)\.", _run("ip", "-o", "-4", "addr").stdout))
    used |= set(re.findall(r"(10\.\d+\.\d+)\.\d+/", _run("ip", "-4", "route").stdout))
    start = os.getpid()
    for n in range(91 * 256):
        k = (start + n) % (91 * 256)
        candidate = f"10.{160 + k // 256}.{k % 256}"
        if candidate not in used:
            return candidate
    raise SshHostsUnavailable("no free 10.160-250.x.0/24 subnet")


def _remove_tagged(tag: str) -> None:
    names = _run("ip", "netns", "list", check=False).stdout
    for netns in re.findall(rf"^({re.escape(tag)}-login\d+)", names, re.M):
        for pid in _run("ip", "netns", "pids", netns, check=False).stdout.split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        _run("ip", "netns", "del", netns, check=False)
    links = _run("ip", "-o", "link", "show", check=False).stdout
    for link in re.findall(rf"^\d+: ({re.escape(tag)}(?:b|v\d+))[@:]", links, re.M):
        _run("ip", "link", "del", link, check=False)
    pid = tag.removeprefix("ds")
    for name in (f"dsu{pid}", f"dst{pid}"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        if f"dunscaith test {tag}" in entry.pw_gecos:
            _run("pkill", "-KILL", "-u", name, check=False)  # this session's test user only, by uid
            _run("userdel", "-r", "-f", name, check=False)
    shutil.rmtree(STATE / tag, ignore_errors=True)


def clear_stale() -> None:
    """Remove what a session that is gone left behind (its pid in the tag is no longer alive)."""
    if not STATE.is_dir():
        return
    for entry in STATE.iterdir():
        match = re.fullmatch(r"ds(\d+)", entry.name)
        if match and not Path(f"/proc/{match.group(1)}").exists():
            _remove_tagged(entry.name)


_shared: SshHosts | None = None


_shared_failure: str | None = None


def shared_hosts(count: int = 3) -> SshHosts:
    """The session's hosts, started on first use and stopped at exit.

    SshHostsUnavailable when the machine lacks a component (tests skip, naming it), except under CI,
    where every component is installed and a skip would hide a broken install step.
    """
    global _shared, _shared_failure
    if _shared_failure is not None:
        raise SshHostsUnavailable(_shared_failure)
    if _shared is None or not _shared.started:
        missing = missing_components()
        if missing:
            message = "the sshd test hosts need: " + ", ".join(missing)
            if os.environ.get("CI"):
                raise RuntimeError(message)
            raise SshHostsUnavailable(message)
        try:
            _shared = SshHosts(count).start()
        except SshHostsUnavailable as exc:
            _shared_failure = str(exc)
            raise RuntimeError(_shared_failure) from None
    return _shared


def stop_shared_hosts() -> None:
    global _shared
    if _shared is not None:
        _shared.stop()
        _shared = None


def wait_for(predicate: object, timeout: float = 30, what: str = "a condition") -> None:
    """Poll ``predicate`` (a callable) until it is true; an event we cannot be told of, only seen."""
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


if __name__ == "__main__":  # python -m tests.infra.ssh_hosts: start, show, wait for Enter, stop
    hosts = SshHosts(int(sys.argv[1]) if len(sys.argv) > 1 else 2).start()
    for h in hosts.hosts:
        print(h.name, h.address, h.netns)
    print("config:", hosts.client_config, "user:", hosts.user.name)
    with contextlib.suppress(EOFError, KeyboardInterrupt):
        input("Enter to stop ")
    hosts.stop()


__all__: Sequence[str] = ["SshHosts", "SshHostsUnavailable", "shared_hosts", "stop_shared_hosts", "wait_for"]
