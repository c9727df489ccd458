"""The forwarded side's owner, forked in-process (adapters/process/forked_owner.py): how its code comes back."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

from dunscaith.adapters.process.forked_owner import ForkedOwner, OwnerLaunch


def _launch(tmp_path: Path) -> OwnerLaunch:
    return OwnerLaunch(tmp_path / "instance", {"PATH": "/usr/bin:/bin"}, str(tmp_path), ("true",))


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_the_code_an_owner_tells_comes_back_before_its_process_ends(tmp_path: Path) -> None:
    def run(launch: OwnerLaunch, ended: Callable[[int], None]) -> int:
        os.write(1, b"out")
        ended(7)  # its records are written: what remains is its teardown, held here until its stdin ends
        _read_all(0)
        return 7

    owner = ForkedOwner.start(run, _launch(tmp_path), with_stdin=True)
    assert _read_all(owner.stdout) == b"out"  # its stdout closed when it told its code
    assert _read_all(owner.stderr) == b""
    assert owner.wait() == 7
    assert os.waitpid(owner.pid, os.WNOHANG) == (0, 0)  # still there: the code did not wait for its end
    owner.close_input()
    assert os.waitstatus_to_exitcode(os.waitpid(owner.pid, 0)[1]) == 7
    owner.close()


def test_an_owner_that_returns_tells_its_code_once(tmp_path: Path) -> None:
    owner = ForkedOwner.start(lambda launch, ended: 3, _launch(tmp_path), with_stdin=True)
    assert owner.wait() == 3
    owner.close()


def test_an_owner_killed_before_it_told_a_code_is_reported_by_its_signal(tmp_path: Path) -> None:
    def run(launch: OwnerLaunch, ended: Callable[[int], None]) -> int:
        os.kill(os.getpid(), signal.SIGKILL)
        return 0

    owner = ForkedOwner.start(run, _launch(tmp_path), with_stdin=False)
    assert owner.wait() == -signal.SIGKILL
    owner.close()


def test_the_code_pipe_is_not_inherited_by_what_the_owner_starts(tmp_path: Path) -> None:
    def run(launch: OwnerLaunch, ended: Callable[[int], None]) -> int:
        os.execv("/bin/sh", ["sh", "-c", "ls /proc/self/fd; exit 4"])

    owner = ForkedOwner.start(run, _launch(tmp_path), with_stdin=False)
    listed = sorted(int(fd) for fd in _read_all(owner.stdout).split())
    assert listed == [0, 1, 2, 3]  # 3: ls's own listing; the code pipe (3 in the owner) closed at exec
    assert owner.wait() == 4  # an exec'd owner tells nothing: its exit status is read instead
    owner.close()


def test_a_prepared_owner_imports_first_then_runs_the_launch_it_is_sent(tmp_path: Path) -> None:
    from dunscaith.adapters.process.forked_owner import PreparedOwner

    def preload() -> Callable[[OwnerLaunch, Callable[[int], None]], int]:
        def run(launch: OwnerLaunch, ended: Callable[[int], None]) -> int:
            os.write(1, f"{launch.argv} {sorted(launch.env)} {launch.cwd} {_read_all(0)!r}".encode())
            return 5

        return run

    prepared = PreparedOwner.fork(preload)
    owner = prepared.start(_launch(tmp_path), with_stdin=True)
    assert owner.stdin is not None
    os.write(owner.stdin, b"input")
    owner.close_input()
    assert _read_all(owner.stdout).decode() == f"('true',) ['PATH'] {tmp_path} b'input'"
    assert owner.wait() == 5
    prepared.cancel()  # launched: nothing more to end
    owner.close()


def test_a_prepared_owner_never_launched_ends_without_running_anything(tmp_path: Path) -> None:
    from dunscaith.adapters.process.forked_owner import PreparedOwner

    ran = tmp_path / "ran"

    def preload() -> Callable[[OwnerLaunch, Callable[[int], None]], int]:
        def run(launch: OwnerLaunch, ended: Callable[[int], None]) -> int:
            ran.touch()
            return 0

        return run

    prepared = PreparedOwner.fork(preload)
    prepared.cancel()  # a refused request, or a query: the child reads the end of its launch pipe
    try:
        _, status = os.waitpid(prepared.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    except ChildProcessError:
        pass  # it had ended already, and cancel reaped it
    assert not ran.exists()
