"""A worker the wrapper's child runs itself, without ``execve`` (exec_side's ``in_process``): it keeps every
guarantee of an exec'd worker (seed 001), and starts as a fresh interpreter would.

Each case runs a real ``PosixWrapper`` in a process of its own (it installs signal handlers), whose
``in_process`` answers with a function of that process; the function writes what it sees to a file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from blake3 import blake3

ROOT = Path(__file__).resolve().parents[3]
OWNER = textwrap.dedent("""
    import atexit, json, os, signal, sys, threading
    from pathlib import Path
    from dunscaith.adapters.clock.system import SystemClock
    from dunscaith.adapters.process.wrapper import LaunchSpec, PosixWrapper

    directory, seen, mode, cwd = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    atexit.register(lambda: seen.with_name("owner-atexit").touch())  # the wrapper's: never the worker's
    signal.signal(signal.SIGUSR1, lambda *_: None)  # a handler of the owner's: the worker has the default

    def program():
        fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
        seen.write_text(json.dumps({
            "pid": os.getpid(), "pgrp": os.getpgrp(), "cwd": os.getcwd(), "env": dict(os.environ),
            "fds": fds, "instance": json.loads((directory / "instance.json").read_text()),
            "sigint": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
            "default": [signal.getsignal(s) == signal.SIG_DFL for s in (signal.SIGHUP, signal.SIGTERM,
                                                                       signal.SIGCHLD, signal.SIGUSR1)],
            "ignored": [signal.getsignal(s) == signal.SIG_IGN for s in (signal.SIGPIPE, signal.SIGXFSZ)],
            "line_buffering": sys.stdout.line_buffering}))
        atexit.register(lambda: print("its own exit handler", flush=True))
        threading.Thread(target=lambda: (__import__("time").sleep(0.2), print("a thread joined"))).start()
        print("out of the worker")
        if mode == "exit":
            sys.exit(5)
        if mode == "raise":
            raise RuntimeError("uncaught")
        if mode == "interrupt":
            raise KeyboardInterrupt
        return 7

    def in_process(argv, env):
        if mode == "undecided":
            raise OSError("cannot tell")
        return None if argv[0] != "ours" else program

    wrapper = PosixWrapper(directory, SystemClock(), in_process=in_process)
    wrapper.claim()
    argv = ("ours",) if mode not in ("exec", "undecided") else ("sh", "-c", "echo execd; exit 4")
    sys.exit(wrapper.run(LaunchSpec(argv, {"ONLY": "this", "PATH": "/usr/bin:/bin"}, cwd)))
""")


def _run(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess[bytes], dict[str, object], Path]:
    directory, seen, cwd = tmp_path / "instance", tmp_path / "seen.json", tmp_path / "work"
    cwd.mkdir()
    done = subprocess.run([sys.executable, "-c", OWNER, str(directory), str(seen), mode, str(cwd)],
                          capture_output=True, timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          check=False)
    outcome = json.loads((directory / "outcome.json").read_text())
    return done, outcome, seen


def test_a_worker_run_in_process_keeps_the_group_the_barrier_the_environment_and_the_outcome(tmp_path: Path) -> None:
    done, outcome, seen_file = _run(tmp_path, "return")
    assert done.returncode == 7, done.stderr
    seen = json.loads(seen_file.read_text())
    assert seen["pid"] == seen["pgrp"] == seen["instance"]["worker_pid"] == seen["instance"]["process_group"]
    assert seen["env"] == {"ONLY": "this", "PATH": "/usr/bin:/bin"}  # exactly the declared environment
    assert seen["cwd"] == str(tmp_path / "work")
    assert seen["fds"][:3] == [0, 1, 2] and len(seen["fds"]) == 4  # the 4th: listdir's own descriptor
    assert seen["sigint"] and seen["default"] == [True] * 4 and seen["ignored"] == [True, True]
    assert seen["line_buffering"] is False  # stdout is a pipe: block-buffered, as a new interpreter has it
    out = b"out of the worker\na thread joined\nits own exit handler\n"
    assert done.stdout == out  # the worker's own exit: its threads joined, its handlers run, flushed
    assert (outcome["exit_code"], outcome["signal"]) == (7, None)
    assert (outcome["stdout_bytes"], outcome["stdout_digest"]) == (len(out), "blake3:" + blake3(out).hexdigest())
    assert (tmp_path / "owner-atexit").exists()  # the wrapper's exit handler ran once, in the wrapper
    assert not (tmp_path / "instance" / "failure.json").exists()


@pytest.mark.parametrize(("mode", "code", "sig", "stderr"), [
    ("exit", 5, None, b""),
    ("raise", 1, None, b"RuntimeError: uncaught"),
    ("interrupt", None, signal.SIGINT, b""),  # as an interpreter ends on an uncaught KeyboardInterrupt
])
def test_a_worker_run_in_process_ends_as_an_interpreter_ends(tmp_path: Path, mode: str, code: int | None,
                                                              sig: int | None, stderr: bytes) -> None:
    done, outcome, _ = _run(tmp_path, mode)
    assert (outcome["exit_code"], outcome["signal"]) == (code, sig), done.stderr
    assert stderr in done.stderr
    assert done.returncode == (code if code is not None else 128 + signal.SIGINT)


@pytest.mark.parametrize("mode", ["exec", "undecided"])  # not loaded here; the question raised
def test_a_program_not_loaded_here_is_exec_d(tmp_path: Path, mode: str) -> None:
    done, outcome, seen = _run(tmp_path, mode)
    assert (done.returncode, done.stdout) == (4, b"execd\n")
    assert outcome["exit_code"] == 4 and not seen.exists()
