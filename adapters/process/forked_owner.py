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
    def __init__(self, pid: int, stdin: int | None, stdout: int, stderr: int) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self._code: int | None = None

    @classmethod
    def start(cls, run: Callable[[OwnerLaunch], int], launch: OwnerLaunch, with_stdin: bool) -> ForkedOwner:
        """Fork; the child runs ``run(launch)`` (it returns the exit code) and ends with it."""
        in_r, in_w = os.pipe() if with_stdin else (None, None)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            _become_owner(run, launch, in_r, out_w, err_w)
        for fd in (in_r, out_w, err_w):
            if fd is not None:
                os.close(fd)
        for fd in (in_w, out_r, err_r):
            if fd is not None:
                os.set_inheritable(fd, False)
        return cls(pid, in_w, out_r, err_r)

    def close_input(self) -> None:
        if self.stdin is not None:
            with contextlib.suppress(OSError):
                os.close(self.stdin)
            self.stdin = None

    def wait(self) -> int:
        if self._code is None:
            while True:
                try:
                    _, status = os.waitpid(self.pid, 0)
                    break
                except InterruptedError:
                    continue
            self._code = os.waitstatus_to_exitcode(status)
        return self._code

    def close(self) -> None:
        self.close_input()
        for fd in (self.stdout, self.stderr):
            with contextlib.suppress(OSError):
                os.close(fd)


def _become_owner(run: Callable[[OwnerLaunch], int], launch: OwnerLaunch, stdin: int | None, stdout: int,
                  stderr: int) -> None:
    code = EXIT_INTERNAL
    try:
        os.setsid()
        if stdin is not None:  # else the command reads the terminal this process was given
            os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        # what a fresh interpreter starts with (the forwarded side catches these for itself)
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        code = run(launch)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # the child must end here, whatever happened
        with contextlib.suppress(Exception):
            os.write(2, f"dunscaith: internal error: {type(exc).__name__}: {exc}\n".encode())
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
