"""`dunscaith remote terminate` with real processes: groups, grace, refusals, repeats, no live wrapper."""

from __future__ import annotations

import os
import signal
from datetime import datetime
from pathlib import Path

import pytest

from tests.e2e.remote.conftest import GATED, Remote, alive, process_state, read_json, wait_for

pytestmark = pytest.mark.slow

IGNORING_TERM = "trap '' TERM; echo $$ > pid; while :; do sleep 0.05; done"


def _snapshot(d: Path) -> dict[str, tuple[int, bytes]]:
    return {p.name: (p.stat().st_ino, p.read_bytes()) for p in d.iterdir()}


def _at(record: dict[str, object]) -> datetime:
    return datetime.fromisoformat(str(record["at"]))


def test_termination_of_a_worker_that_has_its_own_child(remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = remote.run(d, "sh", "-c", "sleep 1000 & echo $! > child; wait", cwd=gate)
    child = int(wait_for(lambda: (gate / "child").exists() and (gate / "child").read_text().strip(), "the child"))
    assert remote.terminate(d, "--grace", "0.5") == (0, "confirmed")
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    wait_for(lambda: not alive(child), "the worker's child to end")
    terminated, outcome = read_json(d / "terminated.json"), read_json(d / "outcome.json")
    assert terminated["signal"] == "TERM"
    assert terminated["process_group"] == read_json(d / "instance.json")["worker_pid"]
    assert outcome["signal"] == signal.SIGTERM
    # Linux accepts the KILL to a group whose only member is the unreaped leader (macOS would not)
    assert read_json(d / "killed.json")["signal"] == "KILL"
    assert (_at(outcome) - _at(terminated)).total_seconds() >= 0.5


def test_a_kill_after_the_grace(remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = remote.run(d, "sh", "-c", IGNORING_TERM, cwd=gate)
    wait_for(lambda: (gate / "pid").exists(), "the worker")
    assert remote.terminate(d, "--grace", "1") == (0, "confirmed")
    assert proc.wait(timeout=30) == 128 + signal.SIGKILL
    terminated, killed, outcome = (read_json(d / f"{n}.json") for n in ("terminated", "killed", "outcome"))
    assert (_at(killed) - _at(terminated)).total_seconds() >= 1.0
    assert _at(outcome) >= _at(killed)
    assert outcome["signal"] == signal.SIGKILL
    assert remote.status(d)["state"] == "ended"


def test_a_group_member_that_ignores_term_and_holds_stdout_after_the_leader_exits(
        remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = remote.run(d, "sh", "-c", "trap '' TERM; sleep 1000 & echo $! > member; exit 0", cwd=gate)
    leader = remote.instance(d)["worker_pid"]
    member = int(wait_for(lambda: (gate / "member").exists() and (gate / "member").read_text().strip(), "member"))
    wait_for(lambda: process_state(leader) == "Z", "the leader to exit (unreaped)")
    assert os.getpgid(member) == leader
    assert remote.status(d)["state"] == "running"
    assert remote.terminate(d, "--grace", "0.5") == (0, "confirmed")
    assert proc.wait(timeout=30) == 0  # the leader's own exit, recorded once stdout closed
    assert not alive(member)
    assert read_json(d / "killed.json")["signal"] == "KILL"
    assert read_json(d / "outcome.json")["exit_code"] == 0


def test_a_request_with_no_live_wrapper_writes_and_signals_nothing(remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = remote.run(d, "sh", "-c", GATED, cwd=gate)
    worker = int(wait_for(lambda: (gate / "pid").exists() and (gate / "pid").read_text().strip(), "the worker"))
    proc.send_signal(signal.SIGKILL)  # the wrapper dies; its worker does not
    proc.wait(timeout=30)
    before = _snapshot(d)
    status = remote.status(d)
    assert (status["state"], status["live"]) == ("lost", False)
    assert remote.terminate(d, "--grace", "0") == (6, "unrequested")
    assert _snapshot(d) == before
    assert alive(worker)


def test_a_refused_request_then_a_matching_one_that_terminates_the_worker(remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = remote.run(d, "sh", "-c", GATED, cwd=gate)
    nonce = remote.instance(d)["nonce"]
    assert remote.terminate(d, "--nonce", "0" * 32, "--grace", "0.2") == (4, "refused")
    refusal = read_json(d / "refused.1.json")
    assert refusal["request"]["instance"]["nonce"] == "0" * 32
    assert refusal["instance"]["nonce"] == nonce and "nonce" in refusal["reason"]
    assert not (d / "terminate.json").exists()  # removed, so a matching request may follow
    assert proc.poll() is None
    assert remote.terminate(d, "--nonce", nonce, "--grace", "0.2") == (0, "confirmed")
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    status = remote.status(d)
    assert [r["number"] for r in status["refused"]] == [1]
    assert status["terminated"]["request"]["instance"]["nonce"] == nonce


def test_a_repeated_request_and_a_different_one_neither_replaces_the_admitted_one(
        remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = remote.run(d, "sh", "-c", IGNORING_TERM, cwd=gate)
    wait_for(lambda: (gate / "pid").exists(), "the worker")
    assert remote.terminate(d, "--grace", "4") == (0, "confirmed")

    def requests_and_answers() -> dict[str, tuple[int, bytes]]:
        # the wrapper adds killed.json and outcome.json when the grace ends; nothing else may change
        return {k: v for k, v in _snapshot(d).items() if k not in ("killed.json", "outcome.json")}

    admitted = requests_and_answers()
    assert remote.terminate(d, "--grace", "4") == (0, "confirmed")  # the repeat: writes nothing
    assert requests_and_answers() == admitted
    assert remote.terminate(d, "--grace", "1") == (6, "unrequested")  # another request: not its answer
    assert remote.terminate(d, "--grace", "4", "--nonce", "1" * 32) == (6, "unrequested")
    assert requests_and_answers() == admitted
    assert not any(name.startswith("refused") for name in admitted)
    assert proc.wait(timeout=30) == 128 + signal.SIGKILL
    assert read_json(d / "killed.json")["request"]["grace_seconds"] == 4.0
    # after the wrapper ended, the repeat still finds its confirmation in the files
    assert remote.terminate(d, "--grace", "4") == (0, "confirmed")
    assert remote.terminate(d, "--grace", "1") == (6, "unrequested")
    assert requests_and_answers() == admitted


def test_terminate_and_status_refuse_a_directory_that_is_no_instance(remote: Remote, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("someone else's")
    for args in (["terminate", str(tmp_path)], ["status", str(tmp_path)], ["status", str(tmp_path / "nope")]):
        done = remote.cli(*args)
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr


def test_a_damaged_control_file_is_named(remote: Remote, tmp_path: Path) -> None:
    d = tmp_path / "inst"
    assert remote.run(d, "true").wait(timeout=30) == 0
    (d / "outcome.json").write_text('{"format": "something else"}')
    done = remote.cli("status", str(d), "--json")
    assert done.returncode == 2
    assert done.stderr.strip() == f"dunscaith: {d}/outcome.json: format is 'something else', " \
                                  "expected 'dunscaith.remote.outcome/2'"


def test_a_request_the_wrapper_does_not_answer_in_time_is_unanswered(remote: Remote, tmp_path: Path) -> None:
    d, gate = tmp_path / "inst", tmp_path / "gate"
    gate.mkdir()
    proc = remote.run(d, "sh", "-c", GATED, cwd=gate)
    remote.instance(d)
    proc.send_signal(signal.SIGSTOP)  # a live wrapper (it holds the lock) that cannot answer
    try:
        assert remote.terminate(d, "--grace", "0.2", "--wait", "0.5") == (5, "unanswered")
        assert (d / "terminate.json").exists() and not (d / "terminated.json").exists()
    finally:
        proc.send_signal(signal.SIGCONT)
    # the request stays in place; once the wrapper runs again it is admitted, and a repeat sees that
    assert remote.terminate(d, "--grace", "0.2") == (0, "confirmed")
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM


def test_an_empty_directory_has_nothing_to_terminate(remote: Remote, tmp_path: Path) -> None:
    assert remote.status(tmp_path)["state"] == "empty"
    assert remote.terminate(tmp_path) == (6, "unrequested")
    assert list(tmp_path.iterdir()) == []


# Issue 38: the arguments are checked before the instance is looked at (exit 6 "unrequested" before), and on
# a live instance nothing is written: the refusal names the option, never a terminate.json the wrapper removed.
@pytest.mark.parametrize(("args", "named"), [
    (["--grace", "inf"], "--grace inf"), (["--wait", "inf"], "--wait inf"), (["--grace", "1e400"], "--grace inf"),
    (["--grace", "1e300"], "--grace 1e+300"), (["--nonce", ""], "--nonce is empty")])
def test_bad_arguments_are_one_line_and_exit_2_ended_or_live(remote: Remote, tmp_path: Path, args: list[str],
                                                             named: str) -> None:
    ended, live, gate = tmp_path / "ended", tmp_path / "live", tmp_path / "gate"
    gate.mkdir()
    assert remote.run(ended, "true").wait(timeout=30) == 0
    proc = remote.run(live, "sh", "-c", GATED, cwd=gate)
    remote.instance(live)
    for d in (ended, live):
        before = _snapshot(d)
        done = remote.cli("terminate", str(d), *args)
        assert (done.returncode, done.stdout) == (2, ""), done
        assert done.stderr.startswith(f"dunscaith: {named}") and len(done.stderr.splitlines()) == 1, done.stderr
        assert _snapshot(d) == before
    assert proc.poll() is None  # nothing was requested: the worker runs on
    # a grace of 0 sends KILL right behind TERM, and which one ends the worker is then a race (CI saw 137)
    assert remote.terminate(live, "--grace", "2") == (0, "confirmed")
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM


@pytest.mark.parametrize("as_folder", [False, True])
def test_a_directory_holding_only_a_stray_lock_is_no_instance(remote: Remote, tmp_path: Path, as_folder: bool) -> None:
    """Issue 38: a `lock` no wrapper holds, with no launching.json, read as an empty instance (exit 6)."""
    (tmp_path / "lock").mkdir() if as_folder else (tmp_path / "lock").write_text("")
    for command in ("terminate", "status"):
        done = remote.cli(command, str(tmp_path))
        assert done.returncode == 2 and done.stdout == "", done
        assert done.stderr == f"dunscaith: {tmp_path}: not an instance directory (a lock no wrapper holds, and no " \
                              "launching.json: no `remote run` ever started here)\n"
    assert [p.name for p in tmp_path.iterdir()] == ["lock"]
