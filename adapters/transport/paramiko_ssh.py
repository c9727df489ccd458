"""ParamikoTransport: SSH without an ``ssh`` binary, under the same contract as the OpenSSH client.

Built on ``paramiko.Transport`` rather than ``SSHClient``: SSHClient's fallback authentication prints
a prompt on stdout and reads ``input()``, which would corrupt the framed stream and hang a script.
Here authentication is keys only (the agent's, then the config's IdentityFile keys) and never
prompts. Host keys come from the user's known_hosts and are never relaxed: an unknown or changed key
refuses the session. ``@cert-authority`` lines cannot be used by paramiko and are skipped instead of
crashing the load (paramiko #771); ``@revoked`` keys are honoured. A dead peer is noticed by
keepalives plus TCP_USER_TIMEOUT on a socket made here (``set_keepalive`` alone never notices).

At a terminal, the remote gets one too (``get_pty`` with this terminal's TERM and size, resized on
SIGWINCH), and this terminal is put in raw mode and copied to it, as ``ssh -tt`` does: Ctrl-C is then
a byte the remote terminal turns into SIGINT for the remote command. The terminal's modes are given
back when the session ends, however it ends.

What paramiko cannot do, and the OpenSSH transport does: Include and most Match criteria of
ssh_config, ProxyJump, ControlMaster, GSSAPI/Kerberos, hostbased authentication and FIDO keys
(../shared/notes/ssh-hosts.md).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import termios
import threading
import tty
from pathlib import Path
from types import FrameType

import paramiko  # type: ignore[import-untyped]  # paramiko ships no type information

from dunscaith.domain.model.forwarding.evidence import Failure, SessionEvidence
from dunscaith.ports.transport import TransportRefused

READ = 64 * 1024
_TCP_USER_TIMEOUT = getattr(socket, "TCP_USER_TIMEOUT", 18)


class _Refused(Exception):
    def __init__(self, failure: Failure, detail: str) -> None:
        super().__init__(detail)
        self.failure = failure
        self.detail = detail


class _FailedChannel:
    """A session that never reached the host: nothing to carry, only what was proved."""

    def __init__(self, evidence: SessionEvidence) -> None:
        self.evidence = evidence

    def send(self, data: bytes) -> bool:
        return False

    def receive(self, timeout: float) -> bytes | None:
        return b""

    def close_input(self) -> None:
        pass

    def abort(self) -> None:
        pass

    def finish(self, timeout: float) -> SessionEvidence:
        return self.evidence


class _LocalTerminal:
    """This process's terminal handed to a remote one: raw mode, its bytes copied in, its size kept."""

    def __init__(self, fd: int, channel: paramiko.Channel) -> None:
        self.fd = fd
        self.channel = channel
        self._modes = termios.tcgetattr(fd)
        self._wake_r, self._wake_w = os.pipe()
        self._previous_winch: object = None
        self._copier = threading.Thread(target=self._copy, name="terminal-in", daemon=True)

    @staticmethod
    def size(fd: int) -> tuple[int, int]:
        try:
            size = os.get_terminal_size(fd)
            return size.columns, size.lines
        except OSError:
            return 80, 24

    def start(self) -> None:
        tty.setraw(self.fd, termios.TCSADRAIN)
        with contextlib.suppress(ValueError):  # not the main thread: the size stays as it was
            self._previous_winch = signal.signal(signal.SIGWINCH, self._resized)
        self._copier.start()

    def _resized(self, signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(Exception):
            self.channel.resize_pty(*self.size(self.fd))

    def _copy(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd, self._wake_r], [], [])
            if self._wake_r in ready:
                return
            try:
                data = os.read(self.fd, READ)
            except OSError:
                return
            if not data:
                return
            try:
                self.channel.sendall(data)
            except (OSError, paramiko.SSHException, EOFError):
                return

    def close(self) -> None:
        """Give the terminal its modes back; idempotent."""
        if self._wake_w < 0:
            return
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._copier.is_alive():
            self._copier.join(timeout=1.0)
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._modes)
        if self._previous_winch is not None:
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signal.SIGWINCH, self._previous_winch)  # type: ignore[arg-type]
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_w = -1


class _ParamikoChannel:
    def __init__(self, transport: paramiko.Transport, channel: paramiko.Channel,
                 terminal: _LocalTerminal | None = None) -> None:
        self.transport = transport
        self.channel = channel
        self.terminal = terminal
        self._aborted = False
        self._stderr = bytearray()

    def send(self, data: bytes) -> bool:
        if self.terminal is not None:
            return True  # the terminal is the session's stdin (as ssh -tt)
        try:
            self.channel.sendall(data)
            return True
        except (OSError, paramiko.SSHException, EOFError):
            return False

    def receive(self, timeout: float) -> bytes | None:
        self._take_stderr()
        if not self.transport.is_active() and not self.channel.recv_ready():
            return b""
        ready, _, _ = select.select([self.channel], [], [], max(0.0, timeout))
        if not ready:
            return None
        try:
            data: bytes = self.channel.recv(READ)
            return data
        except (OSError, paramiko.SSHException, EOFError):
            return b""

    def _take_stderr(self) -> None:
        while self.channel.recv_stderr_ready():
            self._stderr += self.channel.recv_stderr(READ)
            del self._stderr[:-READ]

    def close_input(self) -> None:
        if self.terminal is not None:
            return  # the terminal's own end is the remote terminal's (a hangup when the session closes)
        with contextlib.suppress(OSError, paramiko.SSHException, EOFError):
            self.channel.shutdown_write()

    def abort(self) -> None:
        self._aborted = True
        if self.terminal is not None:
            self.terminal.close()
        with contextlib.suppress(Exception):
            self.channel.close()
        with contextlib.suppress(Exception):
            self.transport.close()

    def finish(self, timeout: float) -> SessionEvidence:
        # set by the exit status, and by the channel's (or the transport's) close
        self.channel.status_event.wait(timeout)
        if self.terminal is not None:
            self.terminal.close()
        self._take_stderr()
        status = self.channel.recv_exit_status() if self.channel.exit_status_ready() else -1
        self.abort()
        lines = [line.strip() for line in self._stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        detail = lines[-1] if lines else ("" if status >= 0 else "the connection ended without an exit status")
        return SessionEvidence(True, True, None, status if status >= 0 else None, detail)


class ParamikoTransport:
    name = "paramiko"

    def __init__(self, config_file: str | None = None, connect_timeout: int = 20, keepalive: int = 15,
                 user: str | None = None, key_file: str | None = None, port: int | None = None,
                 known_hosts: list[str] | None = None) -> None:
        self.config_file = config_file or str(Path.home() / ".ssh" / "config")
        self.connect_timeout = connect_timeout
        self.keepalive = keepalive
        self.user = user
        self.key_file = key_file
        self.port = port
        self.known_hosts = known_hosts

    def _config(self, host: str) -> paramiko.SSHConfigDict:
        config = paramiko.SSHConfig()
        with contextlib.suppress(FileNotFoundError):
            config = paramiko.SSHConfig.from_path(self.config_file)
        return config.lookup(host)

    def open(self, host: str, command: str, terminal: bool, prompt: bool) -> _ParamikoChannel | _FailedChannel:
        found = self._config(host)
        address = found.get("hostname", host)
        port = self.port or int(found.get("port", 22))
        user = self.user or found.get("user") or os.environ.get("USER") or ""
        reached = False
        transport: paramiko.Transport | None = None
        try:
            sock = self._socket(address, port, found.get("proxycommand"))
            transport = paramiko.Transport(sock)
            transport.set_keepalive(self.keepalive)
            try:
                transport.start_client(timeout=self.connect_timeout)
            except (paramiko.SSHException, EOFError, OSError) as exc:
                raise _Refused(Failure.CONNECTION, f"ssh negotiation with {host} failed: {exc}") from None
            self._check_host_key(host, address, port, transport.get_remote_server_key(), found)
            self._authenticate(transport, user, found)
            reached = True
            channel = transport.open_session(timeout=self.connect_timeout)
            local = None
            if terminal:
                channel.get_pty(term=os.environ.get("TERM") or "vt100", width=_LocalTerminal.size(0)[0],
                                height=_LocalTerminal.size(0)[1])
                try:
                    local = _LocalTerminal(0, channel)
                except termios.error:
                    transport.close()
                    raise TransportRefused("a terminal was asked for, and stdin is not one") from None
            channel.exec_command(command)
            if local is not None:
                local.start()
            return _ParamikoChannel(transport, channel, local)
        except _Refused as refused:
            if transport is not None:
                transport.close()
            return _FailedChannel(SessionEvidence(True, False, refused.failure, None, refused.detail))
        except (OSError, paramiko.SSHException, EOFError) as exc:
            if transport is not None:
                transport.close()
            if reached:  # after authentication: the command may have been sent
                return _FailedChannel(SessionEvidence(True, True, None, None, f"the session failed: {exc}"))
            return _FailedChannel(SessionEvidence(True, False, Failure.CONNECTION, None,
                                                  f"could not connect to {host}: {exc}"))

    def _socket(self, address: str, port: int, proxy: str | None) -> socket.socket | paramiko.ProxyCommand:
        if proxy:
            return paramiko.ProxyCommand(proxy)
        try:
            sock = socket.create_connection((address, port), timeout=self.connect_timeout)
        except OSError as exc:
            raise _Refused(Failure.CONNECTION, f"connect to {address} port {port}: {exc.strerror or exc}") from None
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        with contextlib.suppress(OSError):  # unacknowledged data for this long: the peer is dead
            sock.setsockopt(socket.IPPROTO_TCP, _TCP_USER_TIMEOUT, self.keepalive * 4 * 1000)
        sock.settimeout(None)
        return sock

    def _known_hosts_files(self, found: paramiko.SSHConfigDict) -> list[Path]:
        if self.known_hosts is not None:
            return [Path(p) for p in self.known_hosts]
        named = found.get("userknownhostsfile")
        files = [Path(os.path.expanduser(p)) for p in str(named).split()] if named else [
            Path.home() / ".ssh" / "known_hosts"]
        global_named = found.get("globalknownhostsfile")
        files += [Path(os.path.expanduser(p)) for p in str(global_named).split()] if global_named else [
            Path("/etc/ssh/ssh_known_hosts")]
        return files

    def _check_host_key(self, host: str, address: str, port: int, key: paramiko.PKey,
                        found: paramiko.SSHConfigDict) -> None:
        keys = paramiko.HostKeys()
        revoked: list[paramiko.PKey] = []
        for path in self._known_hosts_files(found):
            try:
                lines = path.read_text().splitlines()
            except OSError:
                continue
            for line in lines:
                read = _known_hosts_line(line)
                if read is None:
                    continue
                entry, is_revoked = read
                if is_revoked:
                    revoked.append(entry.key)
                    continue
                for name in entry.hostnames:
                    keys.add(name, entry.key.get_name(), entry.key)
        if any(key == bad for bad in revoked):
            raise _Refused(Failure.HOST_KEY, f"the host key of {host} is marked @revoked in known_hosts")
        names = [host, address] if port == 22 else [f"[{host}]:{port}", f"[{address}]:{port}"]
        known = [keys.lookup(name) for name in names]
        known_any = [k for k in known if k is not None]
        if not known_any:
            raise _Refused(Failure.HOST_KEY_UNKNOWN, f"no {key.get_name()} host key is known for {host}")
        for entry in known_any:
            if key.get_name() in entry:
                if entry[key.get_name()] == key:
                    return
                raise _Refused(Failure.HOST_KEY_CHANGED, f"the {key.get_name()} host key of {host} has changed")
        raise _Refused(Failure.HOST_KEY_UNKNOWN, f"no {key.get_name()} host key is known for {host}")

    def _authenticate(self, transport: paramiko.Transport, user: str, found: paramiko.SSHConfigDict) -> None:
        keys: list[paramiko.PKey] = []
        with contextlib.suppress(Exception):
            keys += list(paramiko.Agent().get_keys())
        files = [self.key_file] if self.key_file else list(found.get("identityfile", [])) or [
            str(Path.home() / ".ssh" / name) for name in ("id_ed25519", "id_ecdsa", "id_rsa")]
        for name in files:
            path = os.path.expanduser(name)
            if not os.path.exists(path):
                continue
            with contextlib.suppress(paramiko.SSHException, OSError, ValueError, TypeError):
                keys.append(paramiko.PKey.from_path(path))  # an encrypted key needs a prompt: skipped
        for key in keys:
            try:
                transport.auth_publickey(user, key)
            except paramiko.AuthenticationException:
                continue
            except paramiko.SSHException as exc:
                raise _Refused(Failure.AUTH, f"authentication as {user} failed: {exc}") from None
            if transport.is_authenticated():
                return
        raise _Refused(Failure.AUTH, f"{user}: Permission denied (publickey)")


def _known_hosts_line(line: str) -> tuple[paramiko.hostkeys.HostKeyEntry, bool] | None:
    """One known_hosts line: its entry and whether it is marked ``@revoked``; None for a blank line, a
    comment, an ``@cert-authority`` line (paramiko cannot check host certificates) or one it cannot read."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    marker = None
    if text.startswith("@"):
        marker, _, text = text.partition(" ")
        if marker != "@revoked":
            return None
    try:
        entry = paramiko.hostkeys.HostKeyEntry.from_line(text)
    except (paramiko.SSHException, ValueError, TypeError):
        return None
    if entry is None or entry.key is None:
        return None
    return entry, marker == "@revoked"
