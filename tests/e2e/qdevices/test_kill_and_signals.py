"""A killed or signalled live call never sends an order twice; a signal set to ignore stays ignored."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow

# One order: start, submitting, submitted, status PENDING, WAITING, COMPLETED, result = 7 durable lines.
LINES_OF_ONE_ORDER = 7


def wait_for(condition, what: str, seconds: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def has_status_line(cli: Cli) -> bool:
    paths = cli.record_paths() if cli.records.exists() else []
    return bool(paths) and any(line["type"] == "status" for line in cli.lines(paths[0]))


@pytest.mark.parametrize("kill_after", range(1, LINES_OF_ONE_ORDER))
def test_kill_9_after_each_durable_line_then_resume_never_sends_a_second_job(cli: Cli, kill_after: int) -> None:
    manifest = str(cli.manifest(orders=1))
    killed = cli.run("send", manifest, "--live", spec={"kill_after_lines": kill_after})
    assert killed.returncode == -signal.SIGKILL
    record = str(cli.only_record())
    collect = cli.run("send", manifest, "--live", "--resume", record)
    send_more = cli.run("send", manifest, "--live", "--resume", record, "--max-order", "1")
    posts = cli.posts_per_order().get(1, 0)
    state = json.loads(cli.run("jobs", record, "--json").stdout.splitlines()[0])["state"]
    if kill_after == 2:  # after "submitting", before the request: lost, and never sent
        assert (state, posts, collect.returncode, send_more.returncode) == ("lost", 0, 2, 2)
    else:
        assert (state, posts) == ("final", 1), (collect.stderr, send_more.stderr)
    assert cli.fake.requests("cancel") == []


def test_kill_9_after_the_first_order_then_resume_sends_only_the_second(cli: Cli) -> None:
    manifest = str(cli.manifest(orders=2))
    killed = cli.run("send", manifest, "--live", spec={"kill_after_lines": LINES_OF_ONE_ORDER})
    assert killed.returncode == -signal.SIGKILL
    record = str(cli.only_record())
    done = cli.run("send", manifest, "--live", "--resume", record, "--max-order", "2")
    assert done.returncode == 0, done.stderr
    assert cli.posts_per_order() == {1: 1, 2: 1}


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_ends_the_call_with_a_stop_line_and_prints_the_resume_command(cli: Cli, sig: int, code: int) -> None:
    cli.fake.path = ("PENDING",)
    manifest = str(cli.manifest(orders=1, wait=60))
    proc = cli.start("send", manifest, "--live")
    wait_for(lambda: has_status_line(cli), "the first status line")
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    (uuid,) = cli.fake.jobs
    record = cli.only_record()
    assert f"Under way at the stop: order 1 (o1), job {uuid}" in err
    assert f"Resume with: qdevices send {manifest} --live --resume {record}" in err
    last = cli.lines(record)[-1]
    assert (last["type"], last["reason"]) == ("stop", "signal")
    assert cli.fake.requests("cancel") == []  # nothing is cancelled: the job runs on
    cli.fake.jobs[uuid].path = ("PENDING", "COMPLETED")
    assert cli.run("send", manifest, "--live", "--resume", str(record)).returncode == 0
    assert cli.posts_per_order() == {1: 1}


def test_a_signal_set_to_ignore_stays_ignored_so_nohup_works(cli: Cli) -> None:
    cli.fake.path = ("PENDING",)
    proc = cli.start("send", str(cli.manifest(orders=1, wait=60)), "--live",
                     preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    wait_for(lambda: has_status_line(cli), "the first status line")
    proc.send_signal(signal.SIGHUP)
    (uuid,) = cli.fake.jobs
    cli.fake.jobs[uuid].path = ("PENDING", "COMPLETED")
    proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_a_closed_stdout_and_stderr_never_end_a_live_call(cli: Cli) -> None:
    proc = cli.start("send", str(cli.manifest(orders=2)), "--live")
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert cli.posts_per_order() == {1: 1, 2: 1}
    assert [line["type"] for line in cli.lines(cli.only_record())][-1] == "result"


def test_a_second_live_call_on_the_site_is_refused_while_the_first_runs(cli: Cli) -> None:
    cli.fake.path = ("PENDING",)
    proc = cli.start("send", str(cli.manifest(orders=1, wait=60)), "--live")
    try:
        wait_for(lambda: has_status_line(cli), "the first status line")
        second = cli.run("send", str(cli.manifest(orders=1, name="other")), "--live")
        assert second.returncode == 2 and "a live call on mqss runs" in second.stderr
        assert cli.run("check", "--live").returncode == 2
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert cli.fake.job_making_requests() == 1


def test_a_holder_of_another_host_refuses_until_unlock(cli: Cli) -> None:
    state = cli.home / ".local" / "state" / "qdevices"
    state.mkdir(parents=True, mode=0o700)
    (state / "mqss.holder").write_text(json.dumps(
        {"host": "login-2", "pid": 4242, "started": "2026-01-01T00:00:00+00:00", "proc_start": ""}))
    manifest = str(cli.manifest(orders=1))
    refused = cli.run("send", manifest, "--live")
    assert refused.returncode == 2 and "qdevices unlock mqss --host login-2" in refused.stderr
    assert cli.run("unlock", "mqss", "--host", "login-1").returncode == 2
    cleared = cli.run("unlock", "mqss", "--host", "login-2")
    assert cleared.returncode == 0 and "cleared the holder pid 4242 of login-2" in cleared.stdout
    assert cli.run("send", manifest, "--live").returncode == 0


def _other_runner_record(path: Path, state: str) -> bytes:
    lines = [{"type": "start", "at": "2026-01-01T00:00:00+00:00", "app": "other-tool", "format": 1, "site": "mqss",
              "site_device": "Q5", "run": "theirs", "manifest": "/x.toml", "host": "elsewhere", "path": "/x",
              "device": 1, "inode": 1, "pid": 1, "orders": ["t1"], "resume": False, "job_seconds_limit": 60},
             {"type": "submitting", "at": "2026-01-01T00:00:01+00:00", "order": 1, "name": "t1"}]
    if state == "open":
        lines.append({"type": "submitted", "at": "2026-01-01T00:00:02+00:00", "order": 1, "job": "their-job"})
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def test_a_record_of_another_runner_is_decided_in_older_decisions_and_never_written(cli: Cli) -> None:
    older = cli.tmp / "older" / "theirs.jsonl"
    data = _other_runner_record(older, "lost")
    cli.config(f'[mqss]\nolder_records = ["{older.parent}"]\n')
    manifest = str(cli.manifest(orders=1))
    blocked = cli.run("send", manifest, "--live")
    assert blocked.returncode == 2 and "is lost" in blocked.stderr  # it counts in the open-order check
    refused = cli.run("resolve", str(older), "1", "--job", "j")
    assert refused.returncode == 2 and "collect it with its runner" in refused.stderr
    done = cli.run("resolve", str(older), "1", "--none")
    assert done.returncode == 0 and "older_decisions.jsonl of mqss" in done.stdout
    assert older.read_bytes() == data
    decisions = cli.records / "mqss" / "older_decisions.jsonl"
    assert json.loads(decisions.read_text())["option"] == "none"
    assert cli.run("send", manifest, "--live").returncode == 0


def test_gone_takes_an_open_order_of_another_runner(cli: Cli) -> None:
    older = cli.tmp / "older" / "theirs.jsonl"
    _other_runner_record(older, "open")
    cli.config(f'[mqss]\nolder_records = ["{older}"]\n')
    assert cli.run("resolve", str(older), "1", "--expired").returncode == 2
    assert cli.run("resolve", str(older), "1", "--gone").returncode == 0
    assert cli.run("send", str(cli.manifest(orders=1)), "--live").returncode == 0


def test_a_record_of_another_runner_that_no_site_reads_is_refused(cli: Cli) -> None:
    older = cli.tmp / "older" / "theirs.jsonl"
    _other_runner_record(older, "lost")
    done = cli.run("resolve", str(older), "1", "--none")
    assert done.returncode == 2 and "no site reads" in done.stderr
    assert not (cli.records / "mqss" / "older_decisions.jsonl").exists()


def test_resolve_refuses_another_runners_record_whose_first_line_is_no_start_line(cli: Cli) -> None:
    older = cli.tmp / "older" / "theirs.jsonl"
    older.parent.mkdir()
    older.write_text('{"type":"submitting","at":"2026-01-01T00:00:01+00:00","order":1,"name":"t1"}\n')
    cli.config(f'[mqss]\nolder_records = ["{older}"]\n')
    done = cli.run("resolve", str(older), "1", "--none")
    assert done.returncode == 2 and "start line" in done.stderr
