"""Run by ``dunscaith remote run`` as its worker program: load the object's environment, exec the job.

``python -I -S exec_shim.py ENV_FILE -- PROGRAM [ARGS...]``. The environment travels in a 0600 file
of the user's own object directory, never on a command line, where every user of the machine could
read it in ``ps``. ``exec`` keeps the process id, so the worker the process owner recorded (its pid,
its group, its stdout) is the job itself. Self-contained: imports nothing of the project.

The limits the file names are applied here, before the exec, so the job and all it starts inherit
them: ``cpus`` as the CPU affinity (the first N of the CPUs this process may use); ``memory_mb`` and
``time_limit_s`` by one watchdog forked into the job's process group (none when neither is asked).

The memory limit is a resident-memory limit, as Slurm's cgroup (or its ``OverMemoryKill``) enforces
``--mem``, not an address-space one: a JVM or a CUDA program maps far more than it touches, and
``RLIMIT_AS`` failed such a job inside itself (``MemoryError``, exit 1), an end nobody could tell from a
bug. Every ``SAMPLE_S`` the watchdog walks the job's process tree (the job and its descendants, through
``/proc/<pid>/task/<tid>/children``: never a scan of all of ``/proc``) and sums their ``VmRSS``; when the
sum passes the limit, or one process's own peak (``VmHWM``) has since the last sample, it writes
``OOM_MARK`` beside the environment file and SIGKILLs the tree and the group, as the kernel does to a
cgroup past its limit. At the time limit it writes ``TIME_LIMIT_MARK``, sends the group SIGTERM, and
SIGKILL after ``GRACE_S``. With ``signal`` and ``signal_s`` (``submit --signal-before USR1@120``) it
first sends the group that signal ``signal_s`` seconds before the limit, once, so the job may checkpoint.
The watchdog holds none of the job's descriptors, is not counted in the job's memory, and ends as soon
as the job does.
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

TIME_LIMIT_MARK = "time-limit-reached"  # adapters/scheduler/local/layout.py names them too
OOM_MARK = "memory-limit-reached"
GRACE_S = 10.0
SAMPLE_S = 1.0  # how often the memory is sampled (docs/local-scheduler.md: its cost)
_TICK_S = 0.5  # how often the watchdog looks whether the job still lives


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
    time_limit = limits.get("time_limit_s")
    if memory_mb is None and time_limit is None:
        return
    name = limits.get("signal") if time_limit is not None else None
    before = (getattr(signal, "SIG" + str(name)), float(limits.get("signal_s", 0))) if name else None
    _watchdog(
        None if time_limit is None else float(time_limit),
        None if memory_mb is None else int(memory_mb),
        directory,
        before,
    )


def _watchdog(seconds: float | None, memory_mb: int | None, directory: str,
              before: tuple[int, float] | None = None) -> None:
    """Fork the job's watchdog (it returns in the job, which goes on to exec)."""
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
        deadline = None if seconds is None else start + seconds
        signal_at = None if deadline is None or before is None else max(start, deadline - before[1])
        limit = None if memory_mb is None else memory_mb * 1024 * 1024
        ended = _watch(job, deadline, signal_at, before, limit, directory)
        if ended == "time" and seconds is not None:
            with open(os.path.join(directory, TIME_LIMIT_MARK), "w") as handle:
                handle.write(f"{seconds:g}\n")
            os.killpg(os.getpgid(0), signal.SIGTERM)
            if _outlives(job, time.monotonic() + GRACE_S):
                os.killpg(os.getpgid(0), signal.SIGKILL)
    finally:
        os._exit(0)


def _watch(job: int, deadline: float | None, signal_at: float | None, before: tuple[int, float] | None,
           limit: int | None, directory: str) -> str:
    """Until the job ends ("ended"), passes its memory (its tree is killed here: "memory"), or reaches its
    time limit ("time"); the signal before the limit is sent on the way."""
    next_sample = time.monotonic()
    while os.getppid() == job:
        now = time.monotonic()
        if limit is not None and now >= next_sample:
            if _over_memory(job, limit, directory):
                return "memory"
            next_sample = now + SAMPLE_S
        if signal_at is not None and before is not None and now >= signal_at:
            os.killpg(os.getpgid(0), before[0])  # once, SECONDS before the limit: the job may checkpoint
            signal_at = None
        if deadline is not None and now >= deadline:
            return "time"
        wake = [now + _TICK_S] + [t for t in (deadline, signal_at) if t is not None]
        if limit is not None:
            wake.append(next_sample)
        time.sleep(max(0.0, min(wake) - now))
    return "ended"


def _over_memory(job: int, limit: int, directory: str) -> bool:
    """Sample the job's tree once; past ``limit`` bytes, mark it and SIGKILL the tree and the group."""
    resident, peak = _tree_memory(job, os.getpid())
    if resident <= limit and peak <= limit:
        return False
    if os.getppid() != job:
        return False  # it ended while it was read: its end is its own
    with open(os.path.join(directory, OOM_MARK), "w") as handle:
        handle.write(f"{max(resident, peak) // 1024} {limit // 1024}\n")  # KiB used, KiB allowed
    group = os.getpgid(0)
    for pid in _tree(job, os.getpid()):  # read again now: a process that left the group dies too
        try:
            if os.getpgid(pid) != group:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    os.killpg(group, signal.SIGKILL)  # the job's group, this watchdog with it
    return True


def _tree(job: int, skip: int) -> list[int]:
    """The job and its descendants now, but ``skip`` (this watchdog, the job's child): each process's
    threads' ``children`` files, recursively. Without them (a kernel without CONFIG_PROC_CHILDREN) the
    job alone."""
    found: dict[int, None] = {}
    todo = [job]
    while todo:
        pid = todo.pop()
        if pid == skip or pid in found:
            continue
        found[pid] = None
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # it ended meanwhile
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                    todo.extend(int(child) for child in handle.read().split())
            except (OSError, ValueError):
                pass
    return list(found)


def _tree_memory(job: int, skip: int) -> tuple[int, int]:
    """(the resident bytes of the job's tree summed, the highest peak of one of its processes)."""
    pids = _tree(job, skip)
    resident = peak = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", "rb") as handle:
                text = handle.read()
        except OSError:
            continue
        resident += _kib(text, b"\nVmRSS:")
        peak = max(peak, _kib(text, b"\nVmHWM:"))
    return resident * 1024, peak * 1024


def _kib(status: bytes, field: bytes) -> int:
    """A ``VmRSS:    1234 kB`` field of /proc/<pid>/status, in KiB (0 when absent: a zombie, a kernel thread)."""
    at = status.find(field)
    if at < 0:
        return 0
    line = status[at + len(field):status.find(b"\n", at + 1)].split()
    return int(line[0]) if line and line[0].isdigit() else 0


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
