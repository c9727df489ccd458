"""The forwarded command's owner (``remote run``'s wrapper) started by forking this process, not by a new
interpreter: a forwarded command then pays one Python start-up on the host instead of two.

The child is what ``dunscaith remote run --instance-dir D --cwd C -- ARGV`` would be, with the declared
environment handed over in memory (never written to disk): a session and process group of its own
(as ``start_new_session``), stdin/stdout/stderr on fresh pipes, every other descriptor closed (the
request's lock stays the forwarded side's alone), the signal dispositions a fresh interpreter has,
and nothing of the parent's buffered output. The parent has no threads when it forks.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

EXIT_INTERNAL = 3


@dataclass(frozen=True, slots=True)
class OwnerLaunch:
    """What ``remote run`` is given: its instance directory, the worker's environment, cwd and argv."""

    instance_dir: Path
    env: dict[str, str]
    cwd: str
    argv: tuple[str, ...]


# ``run(launch, ended)``: the owner's whole life; its exit code, which it may tell ``ended`` sooner.
OwnerRun = Callable[[OwnerLaunch, Callable[[int], None]], int]


class OwnerProcess(Protocol):
    stdin: int | None  # the command's stdin (non-blocking writes), None when it reads the terminal
    stdout: int
    stderr: int

    def close_input(self) -> None: ...

    def wait(self) -> int:
        """The owner's exit: its code, or -N when signal N ended it (as ``Popen.wait``)."""
        ...

    def close(self) -> None: ...


class ForkedOwner:
    def __init__(self, pid: int, stdin: int | None, stdout: int, stderr: int, code_pipe: int | None = None) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self._code: int | None = None
        self._code_pipe = code_pipe  # the owner writes its exit code here, its last act before _exit
        self._reaped = False

    @classmethod
    def start(cls, run: OwnerRun, launch: OwnerLaunch, with_stdin: bool) -> ForkedOwner:
        """Fork; the child runs ``run(launch, ended)`` (it returns the exit code, and may tell it sooner to
        ``ended``) and ends with it."""
        in_r, in_w = os.pipe() if with_stdin else (None, None)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        code_r, code_w = os.pipe()  # close-on-exec: neither the worker nor its starter inherits it
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(code_r)
            _become_owner(run, launch, in_r, out_w, err_w, code_w)
        for fd in (in_r, out_w, err_w, code_w):
            if fd is not None:
                os.close(fd)
        for fd in (in_w, out_r, err_r):
            if fd is not None:
                os.set_inheritable(fd, False)
        return cls(pid, in_w, out_r, err_r, code_r)

    def close_input(self) -> None:
        if self.stdin is not None:
            with contextlib.suppress(OSError):
                os.close(self.stdin)
            self.stdin = None

    def wait(self) -> int:
        """The owner's exit code as soon as it has said it, else (it was killed first) from ``waitpid``.

        The code is said after the owner's every record is written, so nothing is reported sooner than
        by ``waitpid``; only the kernel's teardown of the owner is no longer waited for (closing its
        inotify descriptor alone waits ~15 ms for an SRCU grace period, on the path of the final frame)."""
        if self._code is None and self._code_pipe is not None:
            said = bytearray()
            while True:
                try:
                    chunk = os.read(self._code_pipe, 16)
                except InterruptedError:
                    continue
                said += chunk
                if not chunk or said.endswith(b"\n"):  # its code, or its end without one (killed)
                    break
            os.close(self._code_pipe)
            self._code_pipe = None
            text = said.decode("ascii", "replace")
            if text.endswith("\n") and text[:-1].lstrip("-").isdigit():
                self._code = int(text[:-1])
        if self._code is None:
            self._code = os.waitstatus_to_exitcode(self._reap(0))
        return self._code

    def _reap(self, flags: int) -> int:
        """``waitpid``'s status (0 if the owner is not reaped by this call)."""
        while True:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except InterruptedError:
                continue
            except ChildProcessError:
                self._reaped = True
                return 0
            if pid:
                self._reaped = True
                return status
            return 0

    def close(self) -> None:
        self.close_input()
        if self._code_pipe is not None:
            with contextlib.suppress(OSError):
                os.close(self._code_pipe)
            self._code_pipe = None
        if not self._reaped:  # an owner that said its code is ending: reaped here if it has, else by init
            self._reap(os.WNOHANG)
        for fd in (self.stdout, self.stderr):
            with contextlib.suppress(OSError):
                os.close(fd)


class PreparedOwner:
    """An owner forked before the forwarded side's own imports: it does its imports (the wrapper's) at the
    same time as the parent does its own, then waits for its launch on a pipe. ``start`` sends it;
    ``cancel`` (a request refused, or a query) ends it, never launched, having claimed nothing."""

    def __init__(self, pid: int, launch_w: int, stdin: int, stdout: int, stderr: int, code_pipe: int) -> None:
        self.pid = pid
        self._launch_w: int | None = launch_w
        self._fds = (stdin, stdout, stderr, code_pipe)

    @classmethod
    def fork(cls, preload: Callable[[], OwnerRun]) -> PreparedOwner:
        """Fork now; the child calls ``preload()`` (its imports) and runs what it returns once launched."""
        launch_r, launch_w = os.pipe()
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        code_r, code_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            for fd in (launch_w, in_w, out_r, err_r, code_r):
                os.close(fd)
            _become_owner(preload, None, in_r, out_w, err_w, code_w, launch_r)
        for fd in (launch_r, in_r, out_w, err_w, code_w):
            os.close(fd)
        return cls(pid, launch_w, in_w, out_r, err_r, code_r)

    def start(self, launch: OwnerLaunch, with_stdin: bool) -> ForkedOwner:
        """Launch it (once): ``launch`` and whether the command reads a pipe (else this process's terminal)."""
        assert self._launch_w is not None, "launched already"
        body = json.dumps({"instance_dir": str(launch.instance_dir), "env": launch.env, "cwd": launch.cwd,
                           "argv": list(launch.argv), "with_stdin": with_stdin}).encode()
        try:
            view = memoryview(body)
            while view:
                view = view[os.write(self._launch_w, view):]
        except OSError:
            pass  # the child is gone: its stdout ends and its exit status says how (wait)
        os.close(self._launch_w)
        self._launch_w = None
        stdin, stdout, stderr, code_pipe = self._fds
        if not with_stdin:
            os.close(stdin)
        return ForkedOwner(self.pid, stdin if with_stdin else None, stdout, stderr, code_pipe)

    def cancel(self) -> None:
        """End a child that was never launched (it exits at the end of its launch pipe); no-op once launched."""
        if self._launch_w is None:
            return
        os.close(self._launch_w)
        self._launch_w = None
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, os.WNOHANG)  # else init reaps it: it ends as soon as it reads the end


def _read_launch(fd: int) -> tuple[OwnerLaunch, bool] | None:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except InterruptedError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    if not chunks:
        return None
    obj = json.loads(b"".join(chunks))
    return (OwnerLaunch(Path(obj["instance_dir"]), dict(obj["env"]), str(obj["cwd"]), tuple(obj["argv"])),
            bool(obj["with_stdin"]))


def _become_owner(run: OwnerRun | Callable[[], OwnerRun], launch: OwnerLaunch | None, stdin: int | None,
                  stdout: int, stderr: int, code_w: int, launch_r: int | None = None) -> None:
    """The child's whole life. ``launch`` None (a prepared owner): ``run()`` gives the run (its imports
    are done here, beside the parent's own), then the launch is read from ``launch_r``; its end with no
    launch ends this child at once, having claimed nothing."""
    code = EXIT_INTERNAL
    told = False

    def tell(said: int) -> None:
        """The forwarded side's loop ends when stdout and stderr close, then reads the code: both go as soon
        as the code is known, before the rest of this process's teardown (see ForkedOwner.wait)."""
        nonlocal told
        if told:
            return
        told = True
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        for fd in (1, 2):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.write(code_w, f"{said}\n".encode())

    try:
        os.setsid()
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        # Placed on 3, 4, ... (by way of high copies, so no placement overwrites another), then one
        # closerange closes every other descriptor: the request's lock stays the parent's alone.
        kept = {name: fd for name, fd in (("code", code_w), ("launch", launch_r), ("stdin", stdin)) if fd is not None}
        high = {name: fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for name, fd in kept.items()}
        placed = {}
        for place, (name, fd) in enumerate(high.items(), start=3):
            os.dup2(fd, place, inheritable=False)
            placed[name] = place
        os.closerange(3 + len(placed), os.sysconf("SC_OPEN_MAX"))
        code_w, launch_r, stdin = placed["code"], placed.get("launch"), placed.get("stdin")
        # what a fresh interpreter starts with (the forwarded side catches these for itself)
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        if launch is None:
            assert launch_r is not None
            runner = cast("Callable[[], OwnerRun]", run)()
            found = _read_launch(launch_r)
            if found is None:
                told = True  # nothing to tell: no launch came, nothing was claimed
                os._exit(0)
            launch, with_stdin = found
            if not with_stdin:
                stdin = None  # the command reads the terminal this process was given
        else:
            runner = cast("OwnerRun", run)
        if stdin is not None:
            os.dup2(stdin, 0)
            os.close(stdin)
        code = runner(launch, tell)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # the child must end here, whatever happened
        with contextlib.suppress(Exception):
            os.write(2, f"dunscaith: internal error: {type(exc).__name__}: {exc}\n".encode())
    finally:
        if not told:
            tell(code)
        os._exit(code)
