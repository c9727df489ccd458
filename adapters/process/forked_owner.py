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
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

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


def _become_owner(run: OwnerRun, launch: OwnerLaunch, stdin: int | None, stdout: int,
                  stderr: int, code_w: int) -> None:
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
        if stdin is not None:  # else the command reads the terminal this process was given
            os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        os.dup2(code_w, 3, inheritable=False)  # then one closerange closes every other descriptor
        code_w = 3
        os.closerange(4, os.sysconf("SC_OPEN_MAX"))
        # what a fresh interpreter starts with (the forwarded side catches these for itself)
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        code = run(launch, tell)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # the child must end here, whatever happened
        with contextlib.suppress(Exception):
            os.write(2, f"dunscaith: internal error: {type(exc).__name__}: {exc}\n".encode())
    finally:
        if not told:
            tell(code)
        os._exit(code)
