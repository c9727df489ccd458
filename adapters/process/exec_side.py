"""The wrapper's child (``dunscaith remote exec``): wait at the barrier, then become the worker.

The wrapper forks this as the leader of a new process group, with the barrier's read end on fd 3
and the status pipe's write end on fd 4. The barrier delivers the program, environment and working
directory (never on a command line, so values stay out of ``ps``) only after ``instance.json`` is on
disk. The status pipe is close-on-exec: a successful ``execve`` closes it with nothing written, a
failed start writes one JSON line, so the wrapper never confuses a failed start with an exit.

It imports only the standard library. The wrapper runs ``main`` in a fork of itself (no interpreter
start-up on the path of every job's start: see ``wrapper._start_exec_side``); ``dunscaith remote exec``
reaches the same ``main``.
"""

from __future__ import annotations

import json
import os
import signal
import sys

BARRIER_FD = 3
STATUS_FD = 4
EXIT_NOT_RELEASED = 125  # the barrier closed without a program: the wrapper gave up before the start
EXIT_START_FAILED = 127


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _fail(stage: str, exc: OSError) -> None:
    message = json.dumps({"stage": stage, "errno": exc.errno, "message": exc.strerror or str(exc)})
    try:
        os.write(STATUS_FD, message.encode())
    finally:
        os._exit(EXIT_START_FAILED)


def main() -> None:
    os.set_inheritable(STATUS_FD, False)
    # Descriptors the wrapper inherited from its own starter (a scheduler's launch lock, say) are the
    # wrapper's business: the worker gets stdin, stdout and stderr and nothing else.
    os.closerange(STATUS_FD + 1, os.sysconf("SC_OPEN_MAX"))
    # The interpreter set these to "ignore" at start-up, and "ignore" survives execve: the worker
    # must begin with the default dispositions a shell would give it.
    for signum in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)
    try:
        spec_text = _read_all(BARRIER_FD)
    finally:
        os.close(BARRIER_FD)
    if not spec_text:
        os._exit(EXIT_NOT_RELEASED)
    spec = json.loads(spec_text)
    argv: list[str] = spec["argv"]
    env: dict[str, str] = spec["env"]
    try:
        os.chdir(spec["cwd"])
    except OSError as exc:
        _fail("cwd", exc)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        _fail("exec", exc)


if __name__ == "__main__":
    main()
    sys.exit(EXIT_START_FAILED)  # pragma: no cover - main either execs or exits
