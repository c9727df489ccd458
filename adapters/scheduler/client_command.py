"""Run one scheduler client command: an argv list, no shell, a timeout that kills the whole group.

Every scheduler kind that drives a batch system through its command-line clients (Slurm, Grid Engine)
runs them here; what a kind's clients say on a failure is the kind's own rule (``Said``).

A client with no input and no working directory of its own (all but sbatch) is started with
``posix_spawn`` and read through one poll of its pipes and its pidfd: a supervisor runs a squeue
every poll, and ``subprocess.Popen`` + ``communicate`` cost it three times the CPU (its pipes
wrapped in file objects, the environment encoded anew, a sleeping loop to reap the child). No
descriptor of this process reaches the client but its stdin (/dev/null) and two pipes: Python opens every descriptor
close-on-exec, and any that is not (inherited, or made inheritable) is closed in the child by the
spawn itself, as ``close_fds`` does, so a lock's descriptor never lives on in an orphaned client.
sbatch (input on stdin, a working directory) goes through ``subprocess`` as before.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

# What a client said when it failed, from its (stdout, stderr): one line, "" when it said nothing.
Said = Callable[[str, str], str]


def last_stderr_line(stdout: str, stderr: str) -> str:
    """Slurm's clients (and the default): the last line written on stderr."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


@dataclass(frozen=True, slots=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int | None  # None when it never ran or was killed by our timeout
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    spawn_error: str = ""  # set when the program could not be started at all (nothing was sent)
    said: Said = field(default=last_stderr_line, repr=False, compare=False)  # the kind's rule for its clients

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.spawn_error

    @property
    def ran(self) -> bool:
        """The client ran to its own end (not timed out, not killed, not unstartable)."""
        return not self.timed_out and not self.spawn_error and self.returncode is not None and self.returncode >= 0

    @property
    def killed_by(self) -> int | None:
        """The signal that ended the client, if one did."""
        return -self.returncode if self.returncode is not None and self.returncode < 0 else None

    def failure(self) -> str:
        """One line saying why the command did not succeed."""
        name = Path(self.argv[0]).name if self.argv else "command"
        if self.spawn_error:
            return f"{name} could not be started: {self.spawn_error}"
        if self.timed_out:
            return f"{name} gave no answer in time and was stopped"
        if self.killed_by is not None:
            return f"{name} was killed by signal {self.killed_by}"
        return f"{name} exited with {self.returncode}: {self.said(self.stdout, self.stderr) or '(no message)'}"


# A call still unanswered after this long is said to be waited for (``Waiting``), once.
NOTICE_AFTER = 10.0
# (the call's words, e.g. "sbatch" or "scontrol show config"; seconds waited so far; its timeout)
Waiting = Callable[[str, float, float], None]


class CommandRunner:
    """Finds a scheduler's programs (in ``bin_dir`` or on PATH) and runs them with the cluster's environment.

    ``waiting``: told once about a call that has not answered for ``notice_after`` seconds, while it
    still waits (a wrong SLURM_CONF or a controller that is down would otherwise be minutes of silence).
    ``said``: what the kind's clients say on a failure, for ``CommandResult.failure``."""

    def __init__(self, bin_dir: Path | None, env: Mapping[str, str], waiting: Waiting | None = None,
                 notice_after: float = NOTICE_AFTER, said: Said = last_stderr_line) -> None:
        self._bin_dir = bin_dir
        self._given = dict(env)
        self._env = {**os.environ, **env}
        self._waiting = waiting
        self._notice_after = notice_after
        self._said = said

    def with_env(self, extra: Mapping[str, str]) -> CommandRunner:
        """The same runner with ``extra`` under the cluster's own environment (which wins)."""
        return CommandRunner(self._bin_dir, {**extra, **self._given}, self._waiting, self._notice_after, self._said)

    def _notice(self, argv: Sequence[str], timeout: float) -> Callable[[], None] | None:
        if self._waiting is None or timeout <= self._notice_after:
            return None
        waiting, after = self._waiting, self._notice_after
        words = " ".join([Path(argv[0]).name, *[a for a in argv[1:] if not a.startswith("-")][:2]])
        return lambda: waiting(words, after, timeout)

    def program(self, name: str) -> str | None:
        if self._bin_dir is not None:
            path = self._bin_dir / name
            return str(path) if os.access(path, os.X_OK) else None
        return shutil.which(name, path=self._env.get("PATH", os.defpath))

    def run(
        self, name: str, args: Sequence[str], *, timeout: float, stdin: str | None = None, cwd: Path | None = None
    ) -> CommandResult:
        result = self._run(name, args, timeout=timeout, stdin=stdin, cwd=cwd)
        return result if self._said is last_stderr_line else replace(result, said=self._said)

    def _run(
        self, name: str, args: Sequence[str], *, timeout: float, stdin: str | None = None, cwd: Path | None = None
    ) -> CommandResult:
        program = self.program(name)
        argv = (program or name, *args)
        if program is None:
            where = f"in {self._bin_dir}" if self._bin_dir is not None else "on PATH"
            return CommandResult(argv, None, spawn_error=f"no executable {name} {where}")
        notice = self._notice(argv, timeout)
        if stdin is None and cwd is None:
            spawned = _spawn_and_read(argv, self._env, timeout, notice, self._notice_after)
            if spawned is not None:
                return spawned
        try:
            # A session of its own, so a timeout can kill the client and anything it started.
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env,
                start_new_session=True,
                cwd=cwd,
                text=True,
                errors="replace",
            )
        except OSError as exc:
            return CommandResult(argv, None, spawn_error=exc.strerror or str(exc))
        try:
            if notice is None:
                out, err = proc.communicate(stdin, timeout=timeout)
            else:
                try:
                    out, err = proc.communicate(stdin, timeout=self._notice_after)
                except subprocess.TimeoutExpired:  # communicate again loses nothing (its documented use)
                    notice()
                    out, err = proc.communicate(timeout=timeout - self._notice_after)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            try:
                out, err = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:  # something outside the group still holds the pipes
                out, err = "", ""
                for pipe in (proc.stdout, proc.stderr):
                    if pipe is not None:
                        pipe.close()
                proc.wait()
            return CommandResult(argv, None, out, err, timed_out=True)
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        return CommandResult(argv, proc.returncode, out, err)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


_GRACE = 5.0  # seconds to read what a killed client's group still writes, as after communicate's timeout


def _spawn_and_read(argv: tuple[str, ...], env: Mapping[str, str], timeout: float,
                    notice: Callable[[], None] | None = None, notice_after: float = NOTICE_AFTER
                    ) -> CommandResult | None:
    """Run ``argv`` in a session of its own, its stdin /dev/null, and read its stdout and stderr to the end;
    None when this way cannot be used here (the caller then uses ``subprocess``)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = None
    try:
        # a pipe on 0, 1 or 2 (this process started with one of them closed) would be clobbered by the
        # dup2s below; and what is inheritable must be listed to be closed
        stray = _inheritable_fds(exclude={out_r, out_w, err_r, err_w})
        if min(out_r, out_w, err_r, err_w) <= 2 or stray is None:
            return None
        actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out_w, 1),
            (os.POSIX_SPAWN_DUP2, err_w, 2),
            *((os.POSIX_SPAWN_CLOSE, fd) for fd in stray),
        ]
        try:
            pid = os.posix_spawn(argv[0], list(argv), env, file_actions=actions, setsid=True)
        except OSError as exc:
            return CommandResult(argv, None, spawn_error=exc.strerror or str(exc))
        finally:
            os.close(out_w)  # the child has its own now: the pipes end when it (and its group) is done
            os.close(err_w)
        try:
            out, err, timed_out = _read_until_exit(pid, out_r, err_r, timeout, notice, notice_after)
        except BaseException:
            _kill_pid_group(pid)
            os.waitpid(pid, 0)
            raise
    finally:
        os.close(out_r)
        os.close(err_r)
        if pid is None:
            for fd in (out_w, err_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
    if timed_out:
        return CommandResult(argv, None, out, err, timed_out=True)
    _, status = os.waitpid(pid, 0)
    return CommandResult(argv, os.waitstatus_to_exitcode(status), out, err)


def _read_until_exit(pid: int, out_r: int, err_r: int, timeout: float, notice: Callable[[], None] | None = None,
                     notice_after: float = NOTICE_AFTER) -> tuple[str, str, bool]:
    """Both pipes to their end and the child's exit, within ``timeout``; past it the group is killed and
    what it still writes within a grace period is kept. (stdout, stderr, timed out). ``notice`` is
    called once the call has waited ``notice_after`` seconds."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    pidfd = os.pidfd_open(pid)
    try:
        poller = select.poll()
        for fd in (out_r, err_r, pidfd):
            poller.register(fd, select.POLLIN)
        open_fds = {out_r, err_r}
        exited = timed_out = False
        deadline = time.monotonic() + timeout
        notice_at = time.monotonic() + notice_after
        while open_fds or not exited:
            now = time.monotonic()
            if notice is not None and now >= notice_at:
                notice()
                notice = None
            left = deadline - now
            if left <= 0:
                if timed_out:
                    break  # something outside the group still holds the pipes
                _kill_pid_group(pid)
                timed_out, deadline = True, time.monotonic() + _GRACE
                continue
            wake = left if notice is None or timed_out else min(left, notice_at - now)
            for fd, _events in poller.poll(wake * 1000):
                if fd == pidfd:
                    exited = True
                    poller.unregister(pidfd)
                    continue
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[fd].append(data)
                else:
                    open_fds.discard(fd)
                    poller.unregister(fd)
    finally:
        os.close(pidfd)
    if timed_out:
        os.waitpid(pid, 0)
    return _text(chunks[out_r]), _text(chunks[err_r]), timed_out


def _text(chunks: list[bytes]) -> str:
    """As ``subprocess`` with ``text=True, errors="replace"`` gives it: UTF-8, universal newlines."""
    return b"".join(chunks).decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _inheritable_fds(exclude: set[int]) -> list[int] | None:
    """This process's descriptors above 2 that an exec would keep (not close-on-exec), or None if they
    cannot be listed."""
    try:
        listed = [int(name) for name in os.listdir("/proc/self/fd")]
    except (OSError, ValueError):
        return None
    kept = []
    for fd in listed:
        if fd <= 2 or fd in exclude:
            continue
        try:
            if os.get_inheritable(fd):
                kept.append(fd)
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return kept


def _kill_pid_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
