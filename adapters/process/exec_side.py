"""The wrapper's child (``dunscaith remote exec``): wait at the barrier, then become the worker.

The wrapper forks this as the leader of a new process group, with the barrier's read end on fd 3
and the status pipe's write end on fd 4. The barrier delivers the program, environment and working
directory (never on a command line, so values stay out of ``ps``) only after ``instance.json`` is on
disk. The status pipe is close-on-exec: a successful ``execve`` closes it with nothing written, a
failed start writes one JSON line, so the wrapper never confuses a failed start with an exit.

It imports only the standard library. The wrapper runs ``main`` in a fork of itself (no interpreter
start-up on the path of every job's start: see ``wrapper._start_exec_side``); ``dunscaith remote exec``
reaches the same ``main``.

A wrapper may be given ``in_process``: asked with the program and environment once they arrived, it
may answer with a function that *is* that program, already loaded in this process (a forwarded
dunscaith command of this same install, whose environment is this process's own but for the hidden
flag: ``forwarding_root.in_process``). The child then runs it itself instead of ``execve``-ing a new
interpreter of the same code (~10-25 ms of start-up, on the path of every forwarded command), after
giving itself what ``execve`` and that interpreter's start would have: exactly the declared
environment, the working directory, the dispositions (handled signals to default; SIGINT to Python's
handler; SIGPIPE and SIGXFSZ ignored), stdout buffered as a fresh interpreter buffers it, no exit
handlers of ours. Everything else is unchanged: the group it leads, the barrier after ``instance.json``,
the status pipe (closed with nothing written once the start cannot fail any more, as ``execve``
closes it), stdout counted and digested by the wrapper, the outcome recorded. It ends as the
interpreter ends (non-daemon threads joined, exit handlers run, output flushed), then ``_exit``.
"""

from __future__ import annotations

import atexit
import gc
import io
import json
import os
import signal
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (~3.5 ms) on every local job's start
if TYPE_CHECKING:
    from typing import NoReturn

# (argv, env) -> the program itself, or None: it is exec'd
InProcess = Callable[[list[str], dict[str, str]], Callable[[], int] | None]

BARRIER_FD = 3
STATUS_FD = 4
EXIT_NOT_RELEASED = 125  # the barrier closed without a program: the wrapper gave up before the start
EXIT_START_FAILED = 127


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _fail(stage: str, exc: OSError | ValueError) -> None:
    errno = exc.errno if isinstance(exc, OSError) else None
    text = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
    message = json.dumps({"stage": stage, "errno": errno, "message": text})
    try:
        os.write(STATUS_FD, message.encode())
    finally:
        os._exit(EXIT_START_FAILED)


def started_by_wrapper() -> bool:
    """Whether this process holds what the wrapper gives its child: a pipe on the barrier's and on the
    status pipe's descriptor. ``dunscaith remote exec`` typed by a user has neither (or some other file
    there): it is refused before anything is closed, read or run."""
    import stat

    try:
        return all(stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in (BARRIER_FD, STATUS_FD))
    except OSError:  # a descriptor not open
        return False


def main(in_process: InProcess | None = None) -> None:
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
        program = in_process(argv, env) if in_process is not None else None
    except Exception:  # the question could not be answered: the program is started as any other
        program = None
    if program is not None:
        _run_here(program, env)
    try:
        execvpe(argv[0], argv, env)
    except (OSError, ValueError) as exc:  # ValueError: an argv execve refuses (an empty program, a NUL)
        _fail("exec", exc)


def execvpe(file: str, argv: list[str], env: dict[str, str]) -> NoReturn:
    """``os.execvpe(file, argv, env)`` for a str environment: the same search of ``env``'s PATH
    (``os.defpath`` without one) and the same error raised when nothing could be run, without
    ``os.get_exec_path``'s import of ``warnings`` (~1 ms of every local job's start, between the fork
    and the job)."""
    if os.path.dirname(file):
        os.execve(file, argv, env)
    saved: OSError | None = None
    last: OSError | None = None
    for directory in env.get("PATH", os.defpath).split(os.pathsep):
        try:
            os.execve(os.path.join(directory, file), argv, env)
        except (FileNotFoundError, NotADirectoryError) as exc:
            last = exc
        except OSError as exc:
            last = exc
            saved = saved or exc
    raise saved or last or FileNotFoundError(file)


def _run_here(program: Callable[[], int], env: dict[str, str]) -> NoReturn:
    """Become the worker without ``execve``: see the module's docstring."""
    os.environ.clear()
    os.environ.update(env)
    for signum in signal.valid_signals():
        try:
            if callable(signal.getsignal(signum)):  # a handler of ours: execve resets it to the default
                signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP and the real-time signals Python cannot set
            continue
    signal.signal(signal.SIGINT, signal.default_int_handler)  # what a fresh interpreter starts with
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if isinstance(sys.stdout, io.TextIOWrapper):  # a pipe to the wrapper: block-buffered, as a new one has it
        sys.stdout.reconfigure(line_buffering=os.isatty(1))  # (-u's write-through is kept: the same env)
    atexit._clear()  # the wrapper's, were there any: never run by the worker
    # The objects inherited from the wrapper (and the forwarded side before it) name descriptors this
    # child has closed, whose numbers the worker's own files will reuse: none may be collected and
    # finalized here (a file object closing "its" fd would close the worker's).
    gc.freeze()
    os.close(STATUS_FD)  # the start can no longer fail: as a successful execve closes it
    code = 1
    try:
        code = program()
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except KeyboardInterrupt:  # as the interpreter ends on one: by SIGINT
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:  # an uncaught error: its traceback and exit 1, as the interpreter prints it
        sys.excepthook(*sys.exc_info())
    finally:
        import threading  # here: the wrapper forks this module, and needs no ``threading`` itself

        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:  # non-daemon threads are joined, as at the interpreter's end
            shutdown()
        atexit._run_exitfuncs()
        _flush()
        os._exit(code)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away
            pass


if __name__ == "__main__":
    main()
    sys.exit(EXIT_START_FAILED)  # pragma: no cover - main either execs or exits
