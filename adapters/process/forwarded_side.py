"""The host's side of forwarding: ``dunscaith _forwarded TOKEN`` (hidden), started by the caller over ssh.

It decodes the token, says hello in a frame, and runs the command under ``dunscaith remote run`` as an
instance named by the request id (``<base>/<request id>/instance``), so what the command did is
recorded on this host whatever happens to the connection. Everything the command writes travels in
frames, and is also kept in ``<base>/<request id>/stdout`` and ``stderr``; the last frame carries the
exit status.

The caller going away is seen three ways: end of input on stdin (the caller holds it open while it
lasts), no heartbeat for four intervals (a cut link gives no end of input), or SIGHUP (a terminal
session's hangup). Each is treated as SIGHUP: the command's process group is sent SIGHUP once, and
it drains under its owner; its output is still kept. With a terminal, Ctrl-C arrives here as SIGINT
and is passed on to the command's group the same way; that terminal (the session's own) carries the
frames, so it is set not to echo into them, not to flush them on Ctrl-C, and to pass each on whole.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from dunscaith.adapters.durable.lock import FlockLock, LockHeld, is_held
from dunscaith.adapters.durable.private_dir import UnsafeDirectory, ensure_private_dir
from dunscaith.adapters.process.forked_owner import OwnerLaunch, OwnerProcess
from dunscaith.domain.model.forwarding.frames import (
    MAX_PAYLOAD,
    SILENCE_BEATS,
    ExitStatus,
    FrameKind,
    FrameReader,
    Hello,
    encode_data,
    encode_frame,
    encode_json,
    exit_payload,
    hello_payload,
)
from dunscaith.domain.model.forwarding.request import (
    FORWARDED_ENV,
    MAX_TOKEN_CHARS,
    PROTOCOL,
    TOKEN_ON_STDIN,
    ForwardRequest,
    Kind,
    TokenError,
    check_request_id,
    decode_token,
)
from dunscaith.domain.model.stdout_digest import finish, new_digest, of_bytes

if TYPE_CHECKING:
    from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles

# What only a query or a signal needs (the instance's records) is imported there: every hop pays for
# what is imported at the top, before its hello.
REFUSED_EXIT = 2
OUTPUT_BUFFER_LIMIT = 8 << 20  # what is held for a caller that stopped reading, before it counts as gone
# The caller writes the token as soon as its request is recorded, milliseconds after its ssh started (it
# first ends this session if it has earlier requests to ask about): a token later than this never comes.
TOKEN_WAIT_SECONDS = 60.0


def read_token_line(fd: int, timeout: float = TOKEN_WAIT_SECONDS) -> tuple[str, bytes] | None:
    """The token the caller writes first on stdin (``remote_command(binary, "-")``), and the bytes after
    it (the first frames); None when stdin ended, or stayed silent or too long, before a whole line."""
    got = bytearray()
    deadline = time.monotonic() + timeout
    while b"\n" not in got:
        left = deadline - time.monotonic()
        if left <= 0 or len(got) > MAX_TOKEN_CHARS + 1:
            return None
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except InterruptedError:
            continue
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except InterruptedError:
            continue
        except OSError:
            return None
        if not chunk:
            return None
        got += chunk
    line, _, rest = bytes(got).partition(b"\n")
    return line.decode("ascii", "replace"), rest


def instances_base(env: Mapping[str, str], user: str) -> Path:
    configured = env.get("DUNSCAITH_FORWARDING__INSTANCES")
    return Path(configured) if configured else Path(f"/var/tmp/dunscaith-{user}/forwarded")


def _keep_frames_whole(fd: int) -> None:
    """A terminal session's own pty carries the frames: a Ctrl-C there must not flush what was written
    and not read yet (NOFLSH), and a frame leaves in one write, with no echo of a typed key inside it
    (no output processing; the caller restores the carriage returns itself)."""
    import termios

    try:
        modes = termios.tcgetattr(fd)
        modes[1] &= ~termios.OPOST
        modes[3] = (modes[3] | termios.NOFLSH) & ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, modes)
    except termios.error:
        pass  # not a terminal after all: nothing to keep whole


class _Out:
    """Our stdout toward the caller: non-blocking, so a stalled caller never stops the loop."""

    def __init__(self) -> None:
        self.pending = bytearray()
        self.gone = False
        with contextlib.suppress(OSError):
            os.set_blocking(1, False)

    def put(self, data: bytes) -> None:
        if not self.gone:
            self.pending += data
            if len(self.pending) > OUTPUT_BUFFER_LIMIT:
                self.gone = True
                self.pending.clear()
            self.flush()

    def flush(self) -> None:
        while self.pending and not self.gone:
            try:
                written = os.write(1, self.pending)
            except BlockingIOError:
                return
            except OSError:
                self.gone = True
                self.pending.clear()
                return
            del self.pending[:written]

    def drain(self, seconds: float) -> None:
        """Give the last frames a moment to leave before the process ends."""
        deadline = time.monotonic() + seconds
        while self.pending and not self.gone and time.monotonic() < deadline:
            select.select([], [1], [], 0.1)
            self.flush()


class ForwardedSide:
    def __init__(self, token: str, binary: str, version: str, env: Mapping[str, str], user: str,
                 start_owner: Callable[[OwnerLaunch, bool], OwnerProcess]) -> None:
        """``start_owner(launch, with_stdin)`` starts the command under its owner (``remote run``)."""
        self.start_owner = start_owner
        self.token = token
        self.binary = binary
        self.version = version
        self.env = dict(env)
        self.base = instances_base(env, user)
        self.host = os.uname().nodename  # what gethostname(3) returns, without importing socket
        self._signals: list[int] = []
        self._input = b""  # what came on stdin after the token: the first frames
        self._wanted: list[int] = []  # signals for the command's group, delivered once it is published

    def __call__(self) -> int:
        if self.env.get(FORWARDED_ENV):
            return self._refuse_plain(f"this command was itself forwarded (request {self.env[FORWARDED_ENV]}); "
                                      "a forwarded command never forwards again")
        token = self.token
        if token == TOKEN_ON_STDIN:
            found = read_token_line(0)
            if found is None:  # the caller went away (or never wrote) before its request: nothing ran
                return self._refuse_plain(f"on {self.host}: no request arrived on stdin; nothing was run")
            token, self._input = found
        try:
            request = decode_token(token, self.version)
        except TokenError as exc:  # no frames: the caller's protocol may frame differently
            return self._refuse_plain(f"on {self.host}: {exc}")
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        if request.terminal:
            _keep_frames_whole(1)
        out = _Out()
        rid = request.request_id
        out.put(b"\n" + encode_json(rid, FrameKind.HELLO, hello_payload(Hello(PROTOCOL, self.version, self.host))))
        code = self._outcome(request, out) if request.kind is Kind.OUTCOME else self._run(request, out)
        out.drain(5.0)
        return code

    def _refuse_plain(self, text: str) -> int:
        print(f"dunscaith: {text}", file=sys.stderr, flush=True)
        return REFUSED_EXIT

    def _final(self, out: _Out, rid: str, code: int, count: int = 0, digest: str = "") -> int:
        digest = digest or of_bytes(b"")
        out.put(encode_json(rid, FrameKind.EXIT, exit_payload(ExitStatus(code, count, digest))))
        return code

    # ---- an outcome query -------------------------------------------------------------------------

    def _outcome(self, request: ForwardRequest, out: _Out) -> int:
        from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles, NotAnInstance
        from dunscaith.domain.model.forwarding.recovery import report_from_status, report_payload
        from dunscaith.domain.model.remote.control import ControlError
        from dunscaith.domain.model.remote.state import status_object

        rid = request.request_id
        try:
            target = check_request_id(request.argv[0] if request.argv else "")
        except ValueError as exc:
            out.put(b"".join(encode_data(rid, FrameKind.ERR, f"dunscaith: {exc}\n".encode())))
            return self._final(out, rid, REFUSED_EXIT)
        folder = self.base / target
        arrived = folder.is_dir()
        side_live = arrived and is_held(folder / "lock")
        status = None
        if (folder / "instance").is_dir():
            files = DirectoryInstanceFiles(folder / "instance")
            try:
                live, records = files.read()
                status = status_object(files.location, live, records)
            except (NotAnInstance, ControlError) as exc:
                out.put(b"".join(encode_data(rid, FrameKind.ERR, f"dunscaith: {exc}\n".encode())))
                return self._final(out, rid, REFUSED_EXIT)
        report = report_from_status(target, arrived, side_live, status)
        out.put(encode_json(rid, FrameKind.RESULT, report_payload(report)))
        return self._final(out, rid, 0)

    # ---- a command ---------------------------------------------------------------------------------

    def _run(self, request: ForwardRequest, out: _Out) -> int:
        rid = request.request_id
        try:
            ensure_private_dir(self.base, parents=True)
        except UnsafeDirectory as exc:  # never re-moded; the request is refused before anything runs
            out.put(b"".join(encode_data(rid, FrameKind.ERR, f"dunscaith: on {self.host}: {exc}\n".encode())))
            return self._final(out, rid, REFUSED_EXIT)
        folder = self.base / rid
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            text = f"dunscaith: request {rid} was already received on {self.host}; a request never runs twice\n"
            out.put(b"".join(encode_data(rid, FrameKind.ERR, text.encode())))
            return self._final(out, rid, REFUSED_EXIT)
        lock = FlockLock(folder / "lock")
        try:
            lock.acquire()
        except LockHeld:  # cannot be: the folder is new and ours
            return self._final(out, rid, REFUSED_EXIT)
        environment = {**self.env, FORWARDED_ENV: rid}
        launch = OwnerLaunch(folder / "instance", environment, self.env.get("HOME", "/"),
                             (self.binary, *request.argv))
        for signum in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._on_signal)
        try:
            owner = self.start_owner(launch, not request.terminal)
            try:
                return self._own(request, out, owner, folder)
            finally:
                owner.close()
        finally:
            lock.release()

    def _own(self, request: ForwardRequest, out: _Out, child: OwnerProcess, folder: Path) -> int:
        relay = _Relay(self, request, out, child, folder)
        try:
            relay.run()
        finally:
            relay.close_files()
        child.close_input()
        code = child.wait()
        code = code if code >= 0 else 128 - code
        return self._final(out, request.request_id, code, relay.count, finish(relay.digest))

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._signals.append(signum)

    def _drain_signals(self) -> list[int]:
        taken, self._signals[:] = list(self._signals), []
        return taken

    def _deliver(self, folder: Path) -> None:
        """Send the wanted signals to the command's process group, once its owner has published it."""
        from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles, NotAnInstance
        from dunscaith.domain.model.remote.control import ControlError

        instance: DirectoryInstanceFiles = DirectoryInstanceFiles(folder)
        try:
            live, records = instance.read()
        except (NotAnInstance, ControlError):
            return  # not begun yet: tried again on the next turn of the loop
        if records.outcome is not None or records.failure is not None or (not live and records.launching):
            self._wanted.clear()  # it has ended (or its owner is gone): nothing to signal
            return
        if records.instance is None:
            return
        for signum in self._wanted:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(records.instance.process_group, signum)
        self._wanted.clear()


class _Relay:
    """One command's streams, relayed until both its stdout and stderr end: each chunk kept in its file and
    sent in a frame (stdout counted and digested), the caller's input frames written to the command's stdin,
    a heartbeat each interval, and the caller's going (end of input, silence, SIGHUP) passed on as SIGHUP."""

    def __init__(self, side: ForwardedSide, request: ForwardRequest, out: _Out, child: OwnerProcess,
                 folder: Path) -> None:
        self.side, self.out, self.child, self.rid = side, out, child, request.request_id
        self.kept = {child.stdout: open(folder / "stdout", "wb"),  # noqa: SIM115
                     child.stderr: open(folder / "stderr", "wb")}  # noqa: SIM115
        self.kinds = {child.stdout: FrameKind.OUT, child.stderr: FrameKind.ERR}
        self.digest = new_digest()
        self.count = 0
        self.reader = FrameReader(self.rid)
        self.to_child = bytearray()
        self.child_in = child.stdin
        if self.child_in is not None:
            os.set_blocking(self.child_in, False)
        self.watch_input = not request.terminal
        self.input_ended = False
        self.beat = request.heartbeat_seconds
        self.last_heard = time.monotonic()
        self.next_beat = time.monotonic() + self.beat
        self.caller_gone = False
        self.open_fds = set(self.kinds)
        self.instance = folder / "instance"
        self._take_input(side._input)  # what followed the token at once on stdin

    def close_files(self) -> None:
        for f in self.kept.values():
            f.close()

    def run(self) -> None:
        side, out = self.side, self.out
        while self.open_fds:
            self._note_the_caller()
            if side._wanted:
                side._deliver(self.instance)
            readers = list(self.open_fds)
            if self.watch_input and not self.caller_gone:
                readers.append(0)
            writers = [1] if out.pending and not out.gone else []
            if self.to_child and self.child_in is not None:
                writers.append(self.child_in)
            timeout = max(0.0, min(self.next_beat - time.monotonic(), 0.5))
            try:
                ready_r, ready_w, _ = select.select(readers, writers, [], timeout)
            except InterruptedError:
                continue
            if 1 in ready_w:
                out.flush()
            self._write_child(ready_w)
            for fd in ready_r:
                if fd == 0:
                    self._read_caller()
                else:
                    self._read_command(fd)
            if time.monotonic() >= self.next_beat:
                self.next_beat = time.monotonic() + self.beat
                out.put(encode_frame(self.rid, FrameKind.BEAT))

    def _caller_goes(self) -> None:
        self.caller_gone = True
        self.side._wanted.append(signal.SIGHUP)

    def _note_the_caller(self) -> None:
        """The signals that came, passed on; the caller gone (a hangup, silence, a stalled stdout) once."""
        for signum in self.side._drain_signals():
            if signum != signal.SIGHUP:
                self.side._wanted.append(signum)  # Ctrl-C at the caller's terminal, or a TERM: passed on
            elif not self.caller_gone:
                self._caller_goes()
        silent = self.watch_input and time.monotonic() - self.last_heard > SILENCE_BEATS * self.beat
        if (silent or self.out.gone) and not self.caller_gone:
            self._caller_goes()

    def _take_input(self, data: bytes) -> None:
        for frame in self.reader.feed(data):
            if frame.kind is FrameKind.IN:
                self.to_child += frame.payload
            elif frame.kind is FrameKind.IN_END:
                self.input_ended = True  # the command's stdin ends once what came before is in

    def _write_child(self, ready_w: list[int]) -> None:
        if self.child_in is not None and self.child_in in ready_w:
            try:
                del self.to_child[:os.write(self.child_in, self.to_child)]
            except BlockingIOError:
                pass
            except OSError:  # the command closed its stdin: what it did not read is dropped
                self.to_child.clear()
        if self.input_ended and not self.to_child and self.child_in is not None:
            self.child.close_input()
            self.child_in = None

    def _read_caller(self) -> None:
        try:
            data = os.read(0, 65536)
        except OSError:
            data = b""
        if not data:
            self._caller_goes()  # end of input: the caller went away (its stdin is held open)
            return
        self.last_heard = time.monotonic()
        self._take_input(data)

    def _read_command(self, fd: int) -> None:
        data = os.read(fd, MAX_PAYLOAD)
        if not data:
            self.open_fds.discard(fd)
            return
        self.kept[fd].write(data)
        self.kept[fd].flush()
        if self.kinds[fd] is FrameKind.OUT:
            self.digest.update(data)
            self.count += len(data)
        self.out.put(b"".join(encode_data(self.rid, self.kinds[fd], data)))


__all__ = ["FORWARDED_ENV", "ForwardedSide", "instances_base"]
