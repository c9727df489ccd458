"""Run by ``dunscaith remote run`` as its worker program: load the object's environment, exec the job.

``python -I -S exec_shim.py ENV_FILE -- PROGRAM [ARGS...]``. The environment travels in a 0600 file
of the user's own object directory, never on a command line, where every user of the machine could
read it in ``ps``. ``exec`` keeps the process id, so the worker the process owner recorded (its pid,
its group, its stdout) is the job itself. Self-contained: imports nothing of the project.

The limits the file names are applied here, before the exec, so the job and all it starts inherit
them: ``cpus`` as the CPU affinity (the first N of the CPUs this process may use), ``memory_mb`` as
the address-space limit (RLIMIT_AS: without cgroups no resident-memory limit exists), and
``time_limit_s`` by a watchdog forked into the job's process group, which at the limit writes
``TIME_LIMIT_MARK`` beside the environment file, sends the group SIGTERM, and SIGKILL after
``GRACE_S``. The watchdog holds none of the job's descriptors and ends as soon as the job does. With
``signal`` and ``signal_s`` (``submit --signal-before USR1@120``) it first sends the group that signal
``signal_s`` seconds before the limit, once, so the job may checkpoint.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

TYPE_CHECKING = False  # typing (~3.5 ms) is not imported: this runs in every local job's start
if TYPE_CHECKING:
    from typing import Any, NoReturn

TIME_LIMIT_MARK = "time-limit-reached"  # adapters/scheduler/local/layout.py names it too
GRACE_S = 10.0


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("dunscaith local scheduler: usage: exec_shim.py ENV_FILE -- PROGRAM [ARGS...]\n")
        os._exit(2)
    env_file, program = argv[1], argv[3:]
    try:
        with open(env_file, "rb") as handle:
            data = json.load(handle)
        env, limits = data["env"], data.get("limits", {})
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        sys.stderr.write(f"dunscaith local scheduler: cannot read the environment {env_file}: {exc}\n")
        os._exit(127)
    # An object starts once, so its environment (tokens, passwords) need not stay on disk after this.
    try:
        os.unlink(env_file)
    except OSError:
        pass
    # The launch lock (and anything else the process owner inherited) is not the job's business.
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    try:
        _apply(limits, os.path.dirname(os.path.abspath(env_file)))
    except (OSError, ValueError, TypeError) as exc:
        sys.stderr.write(f"dunscaith local scheduler: cannot apply the job's limits {limits}: {exc}\n")
        os._exit(127)
    try:
        _execvpe(program[0], program, env)
    except (OSError, ValueError) as exc:  # ValueError: an argv execve refuses (an empty program, a NUL)
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        sys.stderr.write(f"dunscaith local scheduler: cannot run {program[0]}: {why}\n")
        os._exit(127)


def _execvpe(file: str, argv: list[str], env: dict[str, str]) -> NoReturn:
    """``os.execvpe(file, argv, env)`` for a str environment: the same search of ``env``'s PATH
    (``os.defpath`` without one) and the same error raised when nothing could be run, without
    ``os.get_exec_path``'s import of ``warnings`` (~1 ms of every local job's start, between the fork
    and the job). exec_side.execvpe, again: this file imports nothing of the project."""
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


def _apply(limits: dict[str, Any], directory: str) -> None:
    cpus = limits.get("cpus")
    if cpus is not None:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:int(cpus)])
    memory_mb = limits.get("memory_mb")
    if memory_mb is not None:
        import resource

        size = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    time_limit = limits.get("time_limit_s")
    if time_limit is not None:
        name = limits.get("signal")
        before = (getattr(signal, "SIG" + str(name)), float(limits.get("signal_s", 0))) if name else None
        _watchdog(float(time_limit), os.path.join(directory, TIME_LIMIT_MARK), before)


def _watchdog(seconds: float, mark: str, before: tuple[int, float] | None = None) -> None:
    job = os.getpid()
    start = time.monotonic()
    if os.fork() != 0:
        return  # the job itself goes on to exec
    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the group's SIGTERM is for the job
        if before is not None:
            signal.signal(before[0], signal.SIG_IGN)  # and so is the signal before the limit
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the process owner reads the job's stdout to its end: hold none of it
            os.dup2(devnull, fd)
        deadline = start + seconds
        if before is not None and _outlives(job, max(start, deadline - before[1])):
            os.killpg(os.getpgid(0), before[0])  # once, SECONDS before the limit: the job may checkpoint
        if _outlives(job, deadline):
            with open(mark, "w") as handle:
                handle.write(f"{seconds:g}\n")
            os.killpg(os.getpgid(0), signal.SIGTERM)
            if _outlives(job, time.monotonic() + GRACE_S):
                os.killpg(os.getpgid(0), signal.SIGKILL)
    finally:
        os._exit(0)


def _outlives(job: int, deadline: float) -> bool:
    """True once ``deadline`` passes with the job still alive (it is this process's parent until it ends)."""
    while os.getppid() == job:
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        time.sleep(min(left, 0.5))
    return False


if __name__ == "__main__":
    main(sys.argv)
