"""`dunscaith remote run` with real processes: the start, the forwarding, the hangup, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from blake3 import blake3

from tests.e2e.remote.conftest import DUNSCAITH, GATED, Remote, alive, process_state, read_json, wait_for

pytestmark = pytest.mark.slow


def _ignored_signals(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return int(line.split()[1], 16)
    raise AssertionError("no SigIgn line")


def test_start_barrier_and_status_before_during_and_after_a_run(remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    before = remote.cli("status", str(d), "--json")
    assert before.returncode == 2 and "no such directory" in before.stderr

    # The worker's first act is to copy instance.json: it exists before the worker runs.
    proc = remote.run(d, "sh", "-c", f"cat {d}/instance.json > seen.json; {GATED}; echo out", cwd=gate)
    pid = int(wait_for(lambda: (gate / "pid").exists() and (gate / "pid").read_text().strip(), "the worker"))
    seen = json.loads((gate / "seen.json").read_bytes())
    assert seen == read_json(d / "instance.json")
    assert seen["worker_pid"] == pid == seen["process_group"] == os.getpgid(pid)
    assert seen["wrapper_pid"] == proc.pid
    # the wrapper ignores SIGHUP; the worker starts with the default dispositions
    assert _ignored_signals(pid) & (1 << (signal.SIGHUP - 1) | 1 << (signal.SIGPIPE - 1)) == 0

    during = remote.status(d)
    assert (during["state"], during["live"], during["outcome"]) == ("running", True, None)
    assert during["instance"] == seen and during["launching"]["argv"][0] == "sh"
    assert during["launching"]["env_names"] == ["PATH"]

    (gate / "go").touch()
    out, _ = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, b"out\n")
    after = remote.status(d)
    assert (after["state"], after["live"]) == ("ended", False)
    assert after["outcome"]["exit_code"] == 0 and after["outcome"]["signal"] is None
    assert after["outcome"]["stdout_bytes"] == 4
    assert after["outcome"]["stdout_digest"] == "blake3:" + blake3(b"out\n").hexdigest()
    text = remote.cli("status", str(d))
    assert text.returncode == 0 and "state: ended" in text.stdout and "exit 0" in text.stdout


@pytest.mark.parametrize(
    ("argv", "cwd", "stage", "errno_name"),
    [
        (("no-such-program-anywhere",), None, "exec", "ENOENT"),
        (("./not-executable",), "here", "exec", "EACCES"),
        (("true",), "missing", "cwd", "ENOENT"),
    ],
    ids=["not found", "not executable", "no working directory"],
)
def test_a_program_that_cannot_start(remote: Remote, tmp_path: Path, argv: tuple[str, ...], cwd: str | None,
                                     stage: str, errno_name: str) -> None:
    d = tmp_path / "inst"
    work = tmp_path / "work"
    work.mkdir()
    (work / "not-executable").write_text("#!/bin/sh\n")
    where = {None: None, "here": work, "missing": tmp_path / "missing"}[cwd]
    proc = remote.run(d, *argv, cwd=where)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out, err) == (127, b"", b"")
    failure = read_json(d / "failure.json")
    assert (failure["stage"], failure["errno"]) == (stage, getattr(__import__("errno"), errno_name))
    assert failure["worker_pid"] == read_json(d / "instance.json")["worker_pid"]
    assert not (d / "outcome.json").exists()
    status = remote.status(d)
    assert (status["state"], status["outcome"]) == ("failed", None)


def test_stdout_is_forwarded_unchanged_with_a_final_line_without_newline(remote: Remote, tmp_path: Path) -> None:
    payload = b"first line\n\x00binary\xff\xfe\r\n" + bytes(range(256)) + b"\nlast line, no newline"
    (tmp_path / "payload").write_bytes(payload)
    proc = remote.run(tmp_path / "inst", "cat", "payload", cwd=tmp_path)
    out, _ = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, payload)
    outcome = read_json(tmp_path / "inst" / "outcome.json")
    assert outcome["stdout_bytes"] == len(payload)
    assert outcome["stdout_digest"] == "blake3:" + blake3(payload).hexdigest()


def test_many_times_the_pumps_buffers_arrive_unchanged_and_digested_in_order(remote: Remote, tmp_path: Path) -> None:
    # More chunks than the pump has buffers, each different: a buffer reused before it was hashed, or
    # hashed out of order, would show in the digest; one forwarded twice or not at all, in the bytes.
    data = os.urandom(40 << 20)
    (tmp_path / "big").write_bytes(data)
    proc = remote.run(tmp_path / "inst", "cat", "big", cwd=tmp_path)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and len(out) == len(data) and out == data
    outcome = read_json(tmp_path / "inst" / "outcome.json")
    assert (outcome["stdout_bytes"], outcome["stdout_digest"]) == (len(data), "blake3:" + blake3(data).hexdigest())


@pytest.mark.parametrize("onto", ["file", "/dev/null"])
def test_stdout_onto_a_file_or_dev_null_is_counted_and_digested_whole(remote: Remote, tmp_path: Path,
                                                                      onto: str) -> None:
    # a file and /dev/null take the reading way (a pipe takes tee and splice): the same count and digest
    data = os.urandom(12 << 20)
    (tmp_path / "big").write_bytes(data)
    target = tmp_path / "out" if onto == "file" else Path(os.devnull)
    with open(target, "wb") as out:
        proc = remote.run(tmp_path / "inst", "cat", "big", cwd=tmp_path, stdout=out)
        assert proc.wait(timeout=120) == 0
    if onto == "file":
        assert (tmp_path / "out").read_bytes() == data
    outcome = read_json(tmp_path / "inst" / "outcome.json")
    assert (outcome["stdout_bytes"], outcome["stdout_digest"]) == (len(data), "blake3:" + blake3(data).hexdigest())


def test_64_mib_onto_an_append_only_file_as_the_local_scheduler_opens_it(remote: Remote, tmp_path: Path) -> None:
    data = os.urandom(64 << 20) + b"\nthe last line, no newline"
    (tmp_path / "big").write_bytes(data)
    (tmp_path / "out").write_bytes(b"an earlier attempt\n")
    out = os.open(tmp_path / "out", os.O_WRONLY | os.O_APPEND)
    try:
        proc = remote.run(tmp_path / "inst", "cat", "big", cwd=tmp_path, stdout=out)
        assert proc.wait(timeout=120) == 0
    finally:
        os.close(out)
    assert (tmp_path / "out").read_bytes() == b"an earlier attempt\n" + data
    outcome = read_json(tmp_path / "inst" / "outcome.json")
    assert (outcome["stdout_bytes"], outcome["stdout_digest"]) == (len(data), "blake3:" + blake3(data).hexdigest())


@pytest.mark.parametrize(("size", "read"), [(1 << 20, 100), (64 << 20, 3 << 20)], ids=["1MiB", "64MiB"])
def test_a_reader_that_goes_away_while_the_worker_writes(remote: Remote, tmp_path: Path, size: int, read: int) -> None:
    data = os.urandom(size)
    (tmp_path / "big").write_bytes(data)
    proc = remote.run(tmp_path / "inst", "cat", "big", cwd=tmp_path)
    assert proc.stdout is not None
    assert proc.stdout.read(read) == data[:read]  # 64 MiB: several spliced chunks first
    proc.stdout.close()  # the reader goes away; the wrapper's next writes fail with EPIPE
    assert proc.wait(timeout=120) == 0  # and the worker never noticed: it was drained
    outcome = read_json(tmp_path / "inst" / "outcome.json")
    assert (outcome["stdout_bytes"], outcome["stdout_digest"]) == (size, "blake3:" + blake3(data).hexdigest())


def test_a_hangup_to_the_wrapper_does_not_end_it(remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = remote.run(d, "sh", "-c", f"{GATED}; echo after the hangup", cwd=gate)
    worker = int(wait_for(lambda: (gate / "pid").exists() and (gate / "pid").read_text().strip(), "the worker"))
    os.kill(proc.pid, signal.SIGHUP)
    assert remote.status(d)["live"] is True
    assert alive(proc.pid) and alive(worker)
    (gate / "go").touch()
    out, _ = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, b"after the hangup\n")
    assert read_json(d / "outcome.json")["exit_code"] == 0


def test_exit_code_and_signal_of_the_worker(remote: Remote, tmp_path: Path) -> None:
    proc = remote.run(tmp_path / "a", "sh", "-c", "exit 42")
    assert proc.wait(timeout=30) == 42
    proc = remote.run(tmp_path / "b", "sh", "-c", "kill -USR1 $$")
    assert proc.wait(timeout=30) == 128 + signal.SIGUSR1
    outcome = read_json(tmp_path / "b" / "outcome.json")
    assert (outcome["exit_code"], outcome["signal"]) == (None, signal.SIGUSR1)


def test_the_worker_gets_exactly_the_declared_environment_and_directory(remote: Remote, tmp_path: Path) -> None:
    os.environ["DUNSCAITH_TEST_LEAK"] = "must not reach the worker"
    try:
        proc = remote.run(tmp_path / "inst", "sh", "-c", "env | sort; pwd", cwd=tmp_path,
                          extra=("--env", "ANSWER=forty two", "--env", "EMPTY="))
        out, _ = proc.communicate(timeout=30)
    finally:
        del os.environ["DUNSCAITH_TEST_LEAK"]
    lines = out.decode().splitlines()
    # sh adds PWD (and dash may add nothing else); nothing of ours leaks in
    assert set(lines[:-1]) - {f"PWD={tmp_path}"} == {"ANSWER=forty two", "EMPTY=", "PATH=/usr/bin:/bin"}
    assert lines[-1] == str(tmp_path)
    launching = read_json(tmp_path / "inst" / "launching.json")
    assert launching["env_names"] == ["ANSWER", "EMPTY", "PATH"]
    assert "forty two" not in (tmp_path / "inst" / "launching.json").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "NOEQUALS", "--", "true"], "--env wants NAME=VALUE"),
        (["--env", "=x", "--", "true"], "--env wants NAME=VALUE"),
        (["--env", "A=1", "--env", "A=2", "--", "true"], "given twice"),
        ([], "Missing argument"),
        (["--", ""], "the program to run is empty ('' after --)"),  # issue 22 item 9: execve's traceback
        (["--", "", "arg"], "the program to run is empty ('' after --)"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(remote: Remote, tmp_path: Path, args: list[str], message: str) -> None:
    done = remote.cli("run", "--instance-dir", str(tmp_path / "inst"), *args)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "inst" / "launching.json").exists()


def test_a_used_instance_dir_is_refused_and_left_alone(remote: Remote, tmp_path: Path) -> None:
    d = tmp_path / "inst"
    assert remote.run(d, "true").wait(timeout=30) == 0
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    done = remote.cli("run", "--instance-dir", str(d), "--", "true")
    assert done.returncode == 2 and "is not empty" in done.stderr
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before


def test_a_refused_instance_dir_gets_no_lock(remote: Remote, tmp_path: Path) -> None:
    """Issue 38: a refused --instance-dir NONEMPTY kept a `lock` file in the user's directory."""
    d = tmp_path / "mine"
    d.mkdir(mode=0o700)
    (d / "notes.txt").write_text("the user's")
    done = remote.cli("run", "--instance-dir", str(d), "--", "true")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"dunscaith: {d} is not empty (it holds notes.txt): give a new or empty directory\n"
    assert [p.name for p in d.iterdir()] == ["notes.txt"]


def test_remote_exec_by_hand_is_one_line_and_exit_2(remote: Remote) -> None:
    """Issue 38: `remote exec` is the wrapper's child; typed by hand it ended in a traceback (EBADF, exit 1)."""
    done = subprocess.run([DUNSCAITH, "remote", "exec"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "dunscaith: remote exec is internal: it is the child `dunscaith remote run` starts, and is " \
                          "never run by hand; give `dunscaith remote run -- PROGRAM [ARGS]...`\n"


def test_the_leader_stays_unreaped_while_stdout_is_held(remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = remote.run(d, "sh", "-c", f"(cd {gate} && {GATED}; echo late) & exit 3", cwd=gate)
    leader = remote.instance(d)["worker_pid"]
    wait_for(lambda: (gate / "pid").exists(), "the member")
    wait_for(lambda: process_state(leader) == "Z", "the leader to exit")
    assert remote.status(d)["state"] == "running"  # no outcome while stdout is open
    (gate / "go").touch()
    out, _ = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (3, b"late\n")


def test_a_descriptor_handed_to_the_wrapper_stays_with_the_wrapper(remote: Remote, tmp_path: Path) -> None:
    keep = os.open(tmp_path / "held", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        done = subprocess.run(
            [DUNSCAITH, "remote", "run", "--instance-dir", str(tmp_path / "inst"), "--env", "PATH=/usr/bin:/bin",
             "--", "ls", "/proc/self/fd"], capture_output=True, pass_fds=(keep,), timeout=60)
    finally:
        os.close(keep)
    assert done.returncode == 0, done.stderr
    assert sorted(int(fd) for fd in done.stdout.split()) == [0, 1, 2, 3]  # 3: ls's own listing of the directory


def test_the_worker_starts_unblocked_in_a_group_of_its_own_whatever_the_wrapper_inherited(
        remote: Remote, tmp_path: Path) -> None:
    # The worker is forked from the wrapper (no interpreter of its own): a mask the wrapper was started
    # with must not reach it, and its group must be the one instance.json names.
    done = subprocess.run(
        [DUNSCAITH, "remote", "run", "--instance-dir", str(tmp_path / "inst"), "--env", "PATH=/usr/bin:/bin",
         "--", "sh", "-c", "grep '^SigBlk:' /proc/self/status; ps -o pgid= -p $$"],
        capture_output=True, text=True, timeout=60,
        preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGTERM}))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0].split() == ["SigBlk:", "0000000000000000"]
    instance = read_json(tmp_path / "inst" / "instance.json")
    assert int(lines[1]) == instance["process_group"] == instance["worker_pid"]
