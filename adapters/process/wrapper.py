"""``dunscaith remote run``: the process owner (POSIX; Linux first, macOS kept honest).

One loop owns the child. A pump thread moves the worker's stdout to ours (so a stalled reader never
stops the loop from answering a termination request); everything else (requests, signals, the
leader's exit, the files) happens in the loop, in one thread. While nothing happens the loop sleeps
without a timeout: the leader's exit (SIGCHLD), the end of stdout, and a name added to the instance
directory (a request: ``directory_watch``) each wake it, and only a grace running out is waited for
by the clock. For its first ``WATCH_AFTER`` the worker has no watch yet and the loop looks every
``EARLY_POLL`` (``_own``): every local job starts here, and most short ones end before a watch pays.
"""

from __future__ import annotations

import _thread  # threading's own primitives: the wrapper needs one thread and two locks, not ``threading`` (~0.5 ms)
import errno as errno_codes
import fcntl
import json
import os
import select
import signal
import time
from collections.abc import Callable

from dunscaith.adapters.durable.lock import FlockLock, LockHeld
from dunscaith.adapters.durable.private_dir import ensure_private_dir
from dunscaith.adapters.durable.private_read import UnsafeFile, read_private
from dunscaith.adapters.durable.publish import STAGING_PREFIX, publish
from dunscaith.adapters.durable.sync import sync_fd
from dunscaith.adapters.process import exec_side
from dunscaith.adapters.process.leader import leader_exited
from dunscaith.adapters.process.stdout_pump import CHUNK, F_SETPIPE_SZ, pump
from dunscaith.domain.model.remote.control import (
    FAILURE,
    INSTANCE,
    KILLED,
    LAUNCHING,
    LOCK,
    OUTCOME,
    REQUEST,
    STDOUT_NOTE,
    TERMINATED,
    Admitted,
    Blocked,
    Failure,
    Instance,
    Launching,
    Outcome,
    Record,
    Refusal,
    Refused,
    Signalled,
    TerminateRequest,
    admit_request,
    encode,
    encode_note,
    refused_name,
)

# typing (~3.5 ms of every local job's start) is not imported here: see domain/model/named_tuple.py
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from dunscaith.domain.model.named_tuple import NamedTuple
if TYPE_CHECKING:  # the watch is imported once a worker outlives WATCH_AFTER (most short jobs never do)
    from pathlib import Path  # neither is pathlib (~4 ms): the directory is a str here (``PosixWrapper``)

    from dunscaith.adapters.process.directory_watch import DirectoryWatch
    from dunscaith.ports.clock import Clock

MAX_REQUEST = 1 << 16
EXIT_START_FAILED = 127
# A control file that cannot be written (a full disk, a quota) is kept and tried again on this backoff,
# for as long as it takes: the worker's end is known only to this process, so it must not end first.
RETRY_FIRST = 0.25
RETRY_MAX = 5.0
# The instance directory is watched for a request once the worker has run this long; until then the loop
# looks for one every EARLY_POLL (see ``PosixWrapper._own``).
WATCH_AFTER = 0.05
EARLY_POLL = 0.01


class InstanceDirUnusable(Exception):
    """The instance directory cannot be used (not empty, in use, not the user's own); nothing started."""


class LaunchNotRecorded(Exception):
    """launching.json or instance.json could not be written, so the program was never started."""


# No dataclasses here: importing ``dataclasses`` and generating classes costs every job's start ~10 ms.

class _Waiting(NamedTuple):
    """A control file not written yet: its name, its bytes, and what follows its writing."""

    name: str
    data: bytes
    then: Callable[[], None] | None = None


class LaunchSpec(NamedTuple):
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str


class _Stdout:
    """What the pump found, set by its thread; ``done`` last."""

    __slots__ = ("count", "digest", "done", "reader_gone")

    def __init__(self) -> None:
        self.count = 0
        self.digest = ""
        self.reader_gone = False
        self.done = False


def _high_fd(fd: int) -> int:
    """A close-on-exec copy above the descriptors posix_spawn will place (0-4), so dup2s never collide."""
    copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return copy


def _pump(source: int, wake: int, result: _Stdout, full: Callable[[OSError | None], None],
          ended: _thread.LockType) -> None:
    """Forward ``source`` to fd 1 unchanged, counted and digested (``stdout_pump``); then wake the loop.
    ``ended`` (held by the starter) is released last: the thread's join."""
    try:
        pumped = pump(source, full=full)
        result.count, result.digest, result.reader_gone = pumped.count, pumped.digest, pumped.reader_gone
    finally:
        result.done = True
        try:  # not contextlib.suppress: contextlib costs every job's start ~0.5 ms to import
            os.write(wake, b"s")
        except OSError:
            pass
        ended.release()


def _start_exec_side(out_w: int, bar_r: int, st_w: int, in_process: exec_side.InProcess | None = None) -> int:
    """The worker-to-be: a fork of this process running ``exec_side.main`` (the barrier, then ``execve``).

    A fork, not a new interpreter (``python -I -S exec_side.py``, ~15-20 ms of start-up on the test
    hosts, on the path of every job's start): the child runs nothing of ours but ``exec_side``, which
    closes every descriptor above its three, resets the signals and replaces itself with the worker,
    so the worker starts exactly as from a fresh interpreter. Its pipes are placed as the spawn placed
    them (stdout, barrier on 3, status on 4; stdin and stderr are ours), with an empty signal mask and
    default HUP, CHLD and PIPE. The group is set by both sides, so it exists before this returns, and
    so before ``instance.json`` names it. This process has no other thread when it forks.
    ``in_process``: see ``exec_side`` (a program already loaded here, run by the child itself).
    """
    pid = os.fork()
    if pid == 0:  # the child: exec_side.main execs the worker or ends the child; nothing returns from here
        try:
            signal.set_wakeup_fd(-1)  # a signal now must not wake the wrapper's loop
            for signum in (signal.SIGHUP, signal.SIGCHLD, signal.SIGPIPE):
                signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.setpgid(0, 0)
            os.dup2(out_w, 1)
            os.dup2(bar_r, exec_side.BARRIER_FD)
            os.dup2(st_w, exec_side.STATUS_FD)
            exec_side.main(in_process)
        finally:
            os._exit(EXIT_START_FAILED)
    try:
        os.setpgid(pid, pid)
    except (ProcessLookupError, PermissionError):  # a child that already ended: the barrier says
        pass
    return pid


class PosixWrapper:
    """Owns one worker for the life of one instance directory."""

    def __init__(self, directory: str | os.PathLike[str], clock: Clock,
                 watch: Callable[[Path], DirectoryWatch] | None = None,
                 ended: Callable[[int], None] | None = None, in_process: exec_side.InProcess | None = None) -> None:
        """``ended(code)``: told the exit code once every record is written, before the watch closes.
        ``in_process``: a worker this process has loaded already may be run by its child without an
        ``execve`` (``exec_side``). ``watch``: how the directory is watched for a request (None: the best
        watch this system gives, ``directory_watch.watch_directory``). ``directory``: a str or a Path, kept
        as its str (every step below is an ``os`` call on a name in it; pathlib costs every job's start
        ~4 ms to import), so a message names it as ``str(Path)`` does."""
        self.directory = os.fspath(directory)
        self.clock = clock
        self.watch = watch
        self.ended = ended
        self.in_process = in_process
        self.host = os.uname().nodename  # what gethostname(3) returns, without importing socket
        self.nonce = os.urandom(16).hex()  # what secrets.token_hex(16) is, without its imports
        self.pid = os.getpid()
        self._lock = FlockLock(os.path.join(self.directory, LOCK))
        self._request_blocked = False
        self._waiting: list[_Waiting] = []  # in the order written: a reader relies on it
        self._blocked: Blocked | None = None
        self._retry_at: float | None = None
        self._backoff = RETRY_FIRST
        self._worker_end: tuple[int | None, int | None] = (None, None)
        self._stdout_note: Blocked | None = None  # the pump's: our stdout (a file) waits for space
        self._note_lock = _thread.allocate_lock()  # the pump's thread and the loop both note
        self._watch: DirectoryWatch | None = None  # made once the worker outlives WATCH_AFTER (``_own``)

    # ---- files -----------------------------------------------------------------------------------

    def _publish(self, name: str, record: Record, *, durable_name: bool = True) -> bool:
        return publish(self.directory, name, encode(record), durable_name=durable_name)

    def _record(self, name: str, record: Record, then: Callable[[], None] | None = None) -> None:
        """Write ``record`` after every file still waiting; kept (and tried again) when it cannot be yet."""
        self._waiting.append(_Waiting(name, encode(record), then))
        self._flush()

    def _flush(self) -> bool:
        """Publish what waits, in order; True once nothing waits. A failure keeps the rest for a retry."""
        while self._waiting:
            item = self._waiting[0]
            try:
                publish(self.directory, item.name, item.data)
            except OSError as exc:
                if exc.errno == errno_codes.ENOENT and not os.path.isdir(self.directory):
                    self._abandon_waiting()
                    return True
                self._block(item.name, exc)
                return False
            self._waiting.pop(0)
            if item.then is not None:
                item.then()
        if self._blocked is not None:
            self._blocked = None
            self._write_note()
            _say(f"{self.directory}: every control file is written now")
        self._retry_at, self._backoff = None, RETRY_FIRST
        return True

    def _abandon_waiting(self) -> None:
        """The instance directory was removed under us: no file of it can ever be written again, so what
        waits is given up, said once, rather than tried for the rest of this process's life."""
        names = ", ".join(item.name for item in self._waiting)
        self._waiting.clear()
        self._blocked = None
        self._retry_at, self._backoff = None, RETRY_FIRST
        _say(f"{self.directory}: the instance directory is gone; {names} cannot be written and is given up")

    def _block(self, name: str, exc: OSError) -> None:
        """Note why ``name`` waits, in the lock file's room (needs no space) and on stderr, and when to retry."""
        reason = exc.strerror or str(exc)
        if self._blocked is None or (self._blocked.file, self._blocked.errno) != (name, exc.errno):
            self._blocked = Blocked(name, exc.errno, reason, self.clock.now(), *self._worker_end)
            self._write_note()
            _say(f"{self.directory}: {name} cannot be written yet ({reason}); kept, and written as soon as it "
                 "can be")
        self._retry_at = self.clock.monotonic() + self._backoff
        self._backoff = min(self._backoff * 2, RETRY_MAX)

    def _write_note(self, note: Blocked | None = None) -> None:
        """The note room says ``note``, else what waits: a control file first, else our stdout."""
        with self._note_lock:
            try:
                os.pwrite(self._lock.fd, encode_note(note or self._blocked or self._stdout_note), 0)
            except (OSError, RuntimeError):  # display only; room made at claim
                pass

    def _stdout_full(self, exc: OSError | None) -> None:
        """The pump's word (from its thread): our stdout, a file, waits for space (``exc``), or goes on."""
        if exc is None:
            self._stdout_note = None
        else:
            self._stdout_note = Blocked(STDOUT_NOTE, exc.errno, exc.strerror or str(exc), self.clock.now())
            _say(f"{self.directory}: the worker's stdout cannot be written yet ({exc.strerror or exc}); "
                 "kept, and written as soon as it can be")
        self._write_note()

    def _settle(self) -> None:
        """Block until every waiting file is written: the last records of a worker whose end only we know."""
        while not self._flush():
            self.clock.sleep(max(0.0, (self._retry_at or 0.0) - self.clock.monotonic()))

    def claim(self) -> None:
        """Make the directory ours: private, locked for our whole life, never used before.

        A directory that already holds something else is refused before anything is made in it (the
        lock included): it is the user's, and a refused run leaves it as it was."""
        self._refuse_leftovers()
        try:
            ensure_private_dir(self.directory, parents=True)
        except (OSError, ValueError) as exc:
            raise InstanceDirUnusable(str(exc)) from None
        deadline = time.monotonic() + 2.0
        while True:  # a status probe holds a shared lock for an instant: retry briefly, never block
            try:
                self._lock.acquire()
                break
            except LockHeld:
                if time.monotonic() > deadline:
                    raise InstanceDirUnusable(f"{self.directory} is in use by another wrapper") from None
                time.sleep(0.02)
        try:  # again, under the lock: something may have been put there since
            self._refuse_leftovers()
        except InstanceDirUnusable:
            self._lock.release()
            raise
        try:  # room for a note that must be writable when nothing else is (a full disk): made now
            os.pwrite(self._lock.fd, encode_note(None), 0)
            sync_fd(self._lock.fd)
        except OSError as exc:
            self._lock.release()
            raise InstanceDirUnusable(f"{self.directory}: its lock file cannot be written "
                                      f"({exc.strerror or exc}); nothing was started") from None

    def _refuse_leftovers(self) -> None:
        try:
            names = os.listdir(self.directory)
        except (FileNotFoundError, NotADirectoryError):  # made by ensure_private_dir, or refused by it
            return
        except OSError as exc:
            raise InstanceDirUnusable(f"{self.directory} cannot be read ({exc.strerror or exc})") from None
        leftovers = [n for n in names if n != LOCK and not n.startswith(STAGING_PREFIX)]
        if leftovers:
            raise InstanceDirUnusable(f"{self.directory} is not empty (it holds {sorted(leftovers)[0]}): give a "
                                      "new or empty directory")

    # ---- the run ---------------------------------------------------------------------------------

    def run(self, spec: LaunchSpec) -> int:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a dropped connection must not end the owner
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the wrapper quietly (state: lost)
        try:
            # Whole before its name exists, as every record; its name is made durable by the directory's
            # sync for the next file (instance.json or failure.json), before anything is started. A crash
            # before that leaves what a crash just before this write leaves (no launching.json, nothing
            # started), so a sync of its own (~1 ms, every job) would add no state a reader can rely on.
            self._publish(LAUNCHING, Launching(self.nonce, self.host, self.pid, spec.argv, spec.cwd,
                                               tuple(sorted(spec.env)), self.clock.now()), durable_name=False)
        except OSError as exc:
            raise LaunchNotRecorded(f"{self.directory}: {LAUNCHING} cannot be written ({exc.strerror or exc}); "
                                    "nothing was started") from None
        try:
            code = self._launch(spec)
            if self.ended is not None:
                # Before the close: closing an inotify descriptor waits for the kernel's SRCU grace period
                # (~15 ms measured on the test hosts), which a forwarded side need not wait for.
                self.ended(code)
            return code
        finally:
            if self._watch is not None:
                self._watch.close()

    def _launch(self, spec: LaunchSpec) -> int:
        out_r, out_w = (_high_fd(fd) for fd in os.pipe())
        bar_r, bar_w = (_high_fd(fd) for fd in os.pipe())
        st_r, st_w = (_high_fd(fd) for fd in os.pipe())
        if F_SETPIPE_SZ is not None:
            try:
                fcntl.fcntl(out_r, F_SETPIPE_SZ, CHUNK)
            except OSError:
                pass
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        try:
            pid = _start_exec_side(out_w, bar_r, st_w, self.in_process)
        except OSError as exc:
            self._record(FAILURE, Failure(self.nonce, self.host, self.pid, None, "spawn", exc.errno,
                                          exc.strerror or str(exc), self.clock.now()))
            self._settle()
            return EXIT_START_FAILED
        finally:
            for fd in (out_w, bar_r, st_w):
                os.close(fd)
        instance = Instance(self.nonce, self.host, self.pid, pid, pid, self.clock.now())
        try:
            self._publish(INSTANCE, instance)
        except OSError as exc:  # the child waits at the barrier: it ends, never released, and nothing ran
            self._write_note(Blocked(INSTANCE, exc.errno, exc.strerror or str(exc), self.clock.now()))
            for fd in (bar_w, st_r, out_r):
                os.close(fd)
            os.waitpid(pid, 0)
            raise LaunchNotRecorded(f"{self.directory}: {INSTANCE} cannot be written ({exc.strerror or exc}); "
                                    "the program was not started") from None
        failure = self._release(instance, spec, bar_w, st_r)
        if failure is not None:
            os.close(out_r)
            self._record(FAILURE, failure)
            os.waitpid(pid, 0)
            self._settle()
            return EXIT_START_FAILED
        stdout = _Stdout()
        pump_ended = _thread.allocate_lock()
        pump_ended.acquire()
        _thread.start_new_thread(_pump, (out_r, wake_w, stdout, self._stdout_full, pump_ended))
        status = self._own(instance, stdout, wake_r)
        pump_ended.acquire()  # the pump thread is done with out_r
        os.close(out_r)
        exit_code = os.waitstatus_to_exitcode(status)
        code, sig = (exit_code, None) if exit_code >= 0 else (None, -exit_code)
        self._worker_end = (code, sig)
        self._record(OUTCOME, Outcome(instance.id, code, sig, stdout.count, stdout.digest, self.clock.now()))
        self._settle()  # the worker's end is known here alone: this process outlives its writing
        return code if code is not None else 128 + (sig or 0)

    def _release(self, instance: Instance, spec: LaunchSpec, bar_w: int, st_r: int) -> Failure | None:
        """Open the barrier: send the launch, then learn from the status pipe whether the start failed."""
        payload = json.dumps({"argv": list(spec.argv), "env": spec.env, "cwd": spec.cwd}).encode()
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(bar_w, view):]
        except BrokenPipeError:
            os.close(bar_w)
            os.close(st_r)
            return Failure(self.nonce, self.host, self.pid, instance.worker_pid, "barrier", errno_codes.EPIPE,
                           "the child ended before its program was sent", self.clock.now())
        os.close(bar_w)
        chunks = []
        while chunk := os.read(st_r, 65536):
            chunks.append(chunk)
        os.close(st_r)
        if not chunks:
            return None
        try:
            report = json.loads(b"".join(chunks))
            stage, err, message = str(report["stage"]), report["errno"], str(report["message"])
        except (ValueError, KeyError, TypeError):
            stage, err, message = "exec", None, "the child reported an unreadable start failure"
        return Failure(self.nonce, self.host, self.pid, instance.worker_pid, stage,
                       err if isinstance(err, int) else None, message, self.clock.now())

    def _own(self, instance: Instance, stdout: _Stdout, wake_r: int) -> int:
        """The one loop: requests, TERM and KILL, and the leader kept unreaped until it may be reaped.

        The directory is watched only once the worker has run ``WATCH_AFTER``: until then the loop looks
        for a request every ``EARLY_POLL``. A job that ends at once so never pays for a watch (closing an
        inotify descriptor waits for the kernel's SRCU grace period, ~15 ms, the largest part of a short
        job's wrapper). A request linked before the watch began wakes no one, so the loop looks once more
        right after making it, before it sleeps."""
        pid = instance.worker_pid
        watch_at = self.clock.monotonic() + WATCH_AFTER
        admitted: TerminateRequest | None = None
        terminated: TerminateRequest | None = None  # the admitted request, once TERM was delivered
        kill_at: float | None = None
        refusals = 0
        while True:
            leader_done = leader_exited(pid)
            if self._waiting and self._retry_at is not None and self.clock.monotonic() >= self._retry_at:
                self._flush()
            # a request is read only once every earlier answer is written: one refusal at a time
            if admitted is None and not self._request_blocked and not self._waiting and not (
                    leader_done and stdout.done):
                admitted, terminated, refusals = self._answer_request(instance, refusals)
                if admitted is not None:
                    # The grace starts once terminated.json is stamped, so no outcome can carry a time
                    # less than the grace after the termination it records.
                    kill_at = self.clock.monotonic() + admitted.grace_seconds
            if kill_at is not None and self.clock.monotonic() >= kill_at:
                if terminated is not None:
                    self._signal(instance, terminated, signal.SIGKILL, KILLED)
                kill_at = None
            if leader_done and stdout.done and kill_at is None:
                break
            watch = self._watch
            if watch is None and self.clock.monotonic() >= watch_at:
                self._watch = self._make_watch()
                continue  # look for a request once more, now that a new one wakes the wait
            _wait(wake_r, watch, self._sleep(watch, watch_at, kill_at))
        _, status = os.waitpid(pid, 0)
        return status

    def _answer_request(self, instance: Instance, refusals: int
                        ) -> tuple[TerminateRequest | None, TerminateRequest | None, int]:
        """The request under its name, if any, admitted (and TERM sent) or refused: (the admitted request,
        that request again once TERM was delivered, the refusals written so far)."""
        found = self._read_request()
        if found is None:
            return None, None, refusals
        verdict = (admit_request(found, instance) if isinstance(found, bytes)
                   else Refusal(None, f"unreadable request: {found}"))
        if isinstance(verdict, Admitted):
            admitted = verdict.request
            delivered = self._signal(instance, admitted, signal.SIGTERM, TERMINATED)
            return admitted, admitted if delivered else None, refusals
        return None, None, self._refuse(instance, verdict.request, verdict.reason, refusals)

    def _sleep(self, watch: DirectoryWatch | None, watch_at: float, kill_at: float | None) -> float | None:
        """How long the loop may wait: the watch's poll (before it, the early poll until the watch begins),
        cut short by the KILL due and the next retry of a record not yet written."""
        timeout = watch.poll_seconds if watch is not None else min(
            EARLY_POLL, max(0.0, watch_at - self.clock.monotonic()))
        for due in (kill_at, self._retry_at if self._waiting else None):
            if due is not None:
                left = max(0.0, due - self.clock.monotonic())
                timeout = left if timeout is None else min(timeout, left)
        return timeout

    def _make_watch(self) -> DirectoryWatch:
        from pathlib import Path  # here: a worker that ends within WATCH_AFTER never pays for it

        if self.watch is not None:
            return self.watch(Path(self.directory))
        from dunscaith.adapters.process.directory_watch import watch_directory

        return watch_directory(Path(self.directory))

    def _read_request(self) -> bytes | str | None:
        """The request's bytes; a string saying why the thing under its name is no request; or None."""
        try:  # never through a planted link, never blocking on a planted FIFO
            return read_private(os.path.join(self.directory, REQUEST), MAX_REQUEST)
        except FileNotFoundError:
            return None
        except UnsafeFile as exc:
            return exc.reason
        except OSError as exc:
            return str(exc.strerror)

    def _refuse(self, instance: Instance, request: TerminateRequest | None, reason: str, refusals: int) -> int:
        while True:
            refusals += 1
            record = Refused(instance.id, refusals, request, reason, self.clock.now())
            try:
                if self._publish(refused_name(refusals), record):
                    break
            except OSError:  # kept, and the request removed once it is written (no other is read before)
                self._record(refused_name(refusals), record, then=self._remove_request)
                return refusals
        self._remove_request()
        return refusals

    def _remove_request(self) -> None:
        try:
            os.unlink(os.path.join(self.directory, REQUEST))  # only now: a matching request may take its place
        except OSError:
            try:
                os.rmdir(os.path.join(self.directory, REQUEST))
            except OSError:  # a thing we cannot remove holds the name: refuse it once, not forever
                self._request_blocked = True

    def _signal(self, instance: Instance, request: TerminateRequest, signum: int, name: str) -> bool:
        try:
            os.killpg(instance.process_group, signum)
        except ProcessLookupError:  # macOS refuses a group whose only member is the unreaped leader
            return False
        sig = "TERM" if signum == signal.SIGTERM else "KILL"
        self._record(name, Signalled(instance.id, request, sig, instance.process_group, self.clock.now()))
        return True


def _say(line: str) -> None:
    """One line on stderr, best effort: on a full disk, the stderr file may be where space ran out."""
    try:
        os.write(2, f"dunscaith: remote run: {line}\n".encode())
    except OSError:
        pass


def _wait(wake: int, watch: DirectoryWatch | None, timeout: float | None) -> None:
    """Sleep until a signal or the pump writes ``wake``, a name is added to the directory, or ``timeout``.

    Both are drained before the loop looks again, so a request linked after this point wakes the next wait.
    """
    watched = None if watch is None else watch.fileno()
    ready, _, _ = select.select([wake] if watched is None else [wake, watched], [], [], timeout)
    if wake in ready:
        try:
            while os.read(wake, 4096):
                pass
        except BlockingIOError:
            pass
    if watch is not None and watched is not None and watched in ready:
        watch.drain()
