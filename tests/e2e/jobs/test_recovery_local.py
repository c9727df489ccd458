"""The opt-in recovery on the local scheduler, as a user types it (issue 39): an attempt past its memory (the
local scheduler's own resident-memory limit) is run again with more; an attempt past its time limit
is run again with a longer one; a job signalled before its limit checkpoints, is requeued and resumes on
its second attempt; off by default; every bad flag and key is one line, exit 2, nothing recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli

pytestmark = pytest.mark.slow

# Resumes from its checkpoint if there is one; else, on USR1, writes one and waits for the time limit.
CHECKPOINTING = """#!/bin/sh
ck="$1"
if [ -f "$ck" ]; then echo "resumed from $(cat "$ck")"; exit 0; fi
trap 'echo step-5 > "$ck"; echo checkpointed' USR1
while true; do sleep 0.2; done
"""


# touches 200 MiB for 3 s (the local scheduler's watchdog samples its memory every second): past 100M, within 400M
GREEDY = ["python3", "-c", "import time; b = b'x' * (200 * 2**20); time.sleep(3); print('done')"]


def _attempts(cli: Cli, job: str) -> list[tuple[str | None, list[str], str | None]]:
    return [(a["object_state"], a["needs"], a["cause"]) for a in cli.status(job)["attempts"]]


def test_an_attempt_out_of_memory_is_run_again_with_more_and_succeeds(cli: Cli) -> None:
    done = cli.run("submit", "--name", "oom", "--mem", "100M", "--on-out-of-memory",
                   "memory_factor=4,max_memory=1G,attempts=1", "--", *GREEDY)

    assert done.returncode == 0, done.stdout + done.stderr
    body = cli.status("oom")
    assert body["outcome"]["result"] == "succeeded"
    assert _attempts(cli, "oom") == [
        ("out_of_memory", ["memory=100M"], None),
        ("completed", ["memory=400M"], "out-of-memory"),
    ]
    assert body["attempts"][1]["why"] == (
        "attempt 1 ended out_of_memory: memory 100M -> 400M (recovery.on_out_of_memory, attempt 1 of 1)"
    )
    assert cli.run("logs", "oom").stdout == "done\n"
    shown = cli.run("status", "oom").stdout
    assert "    needs: memory=400M  (out-of-memory: attempt 1 ended out_of_memory: memory 100M -> 400M " in shown


def test_off_by_default_an_end_out_of_memory_is_the_outcome(cli: Cli) -> None:
    done = cli.run("submit", "--name", "plain-oom", "--mem", "100M", "--", *GREEDY)

    assert done.returncode == 1, done.stdout + done.stderr
    [attempt] = cli.status("plain-oom")["attempts"]
    assert attempt["object_state"] == "out_of_memory"
    assert "its memory limit was passed (" in done.stdout + done.stderr, done.stdout + done.stderr


def test_an_attempt_past_its_time_limit_is_run_again_with_a_longer_one(cli: Cli) -> None:
    done = cli.run(
        "submit",
        "--name",
        "slow",
        "--time",
        "0:01",
        "--on-time-limit",
        "time_factor=8,max_time=1:00",
        "--",
        "sleep",
        "2",
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert _attempts(cli, "slow") == [
        ("timeout", ["time=00:00:01"], None),
        ("completed", ["time=00:00:08"], "time-limit"),
    ]
    assert (
        "    needs: time=00:00:08  (time-limit: attempt 1 ended timeout: time limit 00:00:01 -> 00:00:08 "
        "(recovery.on_time_limit, attempt 1 of 2))"
    ) in cli.run("status", "slow").stdout


def test_the_configured_rule_applies_and_a_submit_flag_turns_it_off(cli: Cli) -> None:
    config = cli.tmp / "home" / ".config" / "dunscaith"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[recovery]\non_time_limit = { time_factor = 8.0, max_time = "1:00" }\n')

    grown = cli.run("submit", "--name", "a", "--time", "0:01", "--", "sleep", "2")
    off = cli.run("submit", "--name", "b", "--time", "0:01", "--on-time-limit", "no", "--", "sleep", "2")

    assert grown.returncode == 0 and [c for _, _, c in _attempts(cli, "a")] == [None, "time-limit"], grown.stderr
    assert off.returncode == 1 and len(_attempts(cli, "b")) == 1
    assert cli.status("b")["outcome"]["detail"].startswith("timeout")


def test_off_by_default_an_end_past_the_time_limit_is_the_outcome(cli: Cli) -> None:
    done = cli.run("submit", "--name", "plain", "--time", "0:01", "--", "sleep", "2")
    assert done.returncode == 1 and len(_attempts(cli, "plain")) == 1


def test_a_job_signalled_before_its_limit_checkpoints_is_requeued_and_resumes(cli: Cli) -> None:
    script = cli.tmp / "train.sh"
    script.write_text(CHECKPOINTING)
    script.chmod(0o755)
    checkpoint = cli.tmp / "checkpoint"

    done = cli.run(
        "submit",
        "--name",
        "train",
        "--time",
        "0:03",
        "--signal-before",
        "USR1@2",
        "--requeue-on-time-limit",
        "1",
        "--",
        str(script),
        str(checkpoint),
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert checkpoint.read_text() == "step-5\n"
    assert "resumed from step-5" in cli.run("logs", "train").stdout
    body = cli.status("train")
    assert [(a["object_state"], a["cause"]) for a in body["attempts"]] == [
        ("timeout", None),
        ("completed", "checkpoint"),
    ]
    assert body["attempts"][1]["why"] == (
        "attempt 1 reached its time limit after its signal (USR1@2): checkpoint requeue 1 of 1, same needs"
    )
    recorded = json.loads(cli.run("events", "train", "--json").stdout.splitlines()[0])["data"]
    assert (recorded["signal_before"], recorded["requeue_on_time_limit"]) == ("USR1@2", 1)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--signal-before", "USR1@10"], "--signal-before USR1@10 is sent before the time limit: give --time too"),
        (
            ["--time", "0:10", "--signal-before", "USR1@10"],
            "--signal-before USR1@10: 10 s is not before the time limit",
        ),
        (["--time", "5", "--signal-before", "KILL@10"], "--signal-before 'KILL@10': SIGNAL@SECONDS"),
        (["--time", "5", "--signal-before", "USR1@0"], "--signal-before 'USR1@0': the seconds before the time limit"),
        (["--time", "5", "--signal-before", "USR1"], "--signal-before 'USR1': SIGNAL@SECONDS"),
        (["--requeue-on-time-limit", "x"], "--requeue-on-time-limit 'x': a whole number from 1 to 1,000"),
        (["--requeue-on-time-limit", "1001"], "--requeue-on-time-limit '1001': a whole number from 1 to 1,000"),
        (["--on-out-of-memory", "memory_factor=2"], "--on-out-of-memory 'memory_factor=2': give max_memory"),
        (["--on-out-of-memory", "max_memory=1x"], "--on-out-of-memory max_memory '1x': a size of at least 1K"),
        (
            ["--on-out-of-memory", "max_memory=8G,memory_factor=1"],
            "--on-out-of-memory memory_factor='1': a number above 1",
        ),
        (["--on-out-of-memory", "max_memory=8G,memory_factor=nan"], "--on-out-of-memory memory_factor='nan': a number"),
        (["--on-out-of-memory", "max_memory=8G,attempts=0"], "--on-out-of-memory attempts '0': a whole number from 1"),
        (
            ["--on-out-of-memory", "max_memory=8G,colour=red"],
            "--on-out-of-memory 'max_memory=8G,colour=red': KEY=VALUE",
        ),
        (["--on-time-limit", "max_time=soon"], "--on-time-limit max_time 'soon': a time limit of at least 1 second"),
        (["--on-time-limit", "time_factor=101,max_time=1:00"], "--on-time-limit time_factor='101': a number above 1"),
        (["--on-time-limit", ""], "--on-time-limit '': KEY=VALUE pairs"),
    ],
)
def test_a_bad_recovery_flag_is_one_line_and_exit_2(cli: Cli, args: list[str], says: str) -> None:
    done = cli.run("submit", "--name", "x", *args, "--", "true")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dunscaith: {says}"), done.stderr
    assert not (cli.root / "records.db").exists()


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        (
            '[recovery]\non_out_of_memory = { memory_factor = 1, max_memory = "64G" }',
            "recovery.on_out_of_memory.memory_factor: must be more than 1",
        ),
        ('[recovery]\non_out_of_memory = { max_memory = "1x" }', "recovery.on_out_of_memory.max_memory: '1x'"),
        (
            "[recovery]\non_out_of_memory = { max_memory = 64 }",
            "recovery.on_out_of_memory.max_memory: a size as a string",
        ),
        (
            '[recovery]\non_out_of_memory = { max_memory = "64G", attempts = 101 }',
            "recovery.on_out_of_memory.attempts: must be at most 100",
        ),
        ("[recovery]\non_time_limit = { time_factor = 2 }", "recovery.on_time_limit.max_time: is required"),
        (
            '[recovery]\non_time_limit = { time_factor = true, max_time = "1:00" }',
            "recovery.on_time_limit.time_factor: a number, not true/false",
        ),
        ("[recovery]\nrequeue_on_time_limit = -1", "recovery.requeue_on_time_limit: must be at least 0"),
        ("[recovery]\nrequeue_on_time_limit = 1001", "recovery.requeue_on_time_limit: must be at most 1000"),
        (
            '[clusters.hpc]\nadapter = "slurm"\nrecovery = { on_time_limit = { max_time = "1:00", colour = 1 } }',
            "clusters.hpc.recovery.on_time_limit.colour: unknown key",
        ),
    ],
)
def test_a_bad_recovery_key_is_one_line_and_exit_2(cli: Cli, toml: str, says: str) -> None:
    config = cli.tmp / "home" / ".config" / "dunscaith"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(toml + "\n")
    done = cli.run("submit", "--name", "x", "--", "true")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and f": {says}" in lines[0], done.stderr
    assert not Path(cli.root / "records.db").exists()


def test_a_plain_submit_records_the_configured_rules_from_the_settings_cache_too(cli: Cli) -> None:
    config = cli.tmp / "home" / ".config" / "dunscaith"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[recovery]\non_out_of_memory = { max_memory = "8G" }\n')
    for job in ("p1", "p2"):  # the second reads its settings from the cache the first remembered
        assert cli.run("submit", "--name", job, "--", "true").returncode == 0
        recorded = json.loads(cli.run("events", job, "--json").stdout.splitlines()[0])["data"]
        assert (recorded["oom_memory_factor"], recorded["oom_max_memory_mb"], recorded["oom_attempts"]) == (
            2.0,
            8192,
            2,
        )


def test_each_element_of_a_sweep_is_requeued_at_its_checkpoint(cli: Cli) -> None:
    script = cli.tmp / "train.sh"
    script.write_text(CHECKPOINTING)
    script.chmod(0o755)

    done = cli.run(
        "submit",
        "--name",
        "sw",
        "--array",
        "0-1",
        "--time",
        "0:03",
        "--signal-before",
        "USR1@2",
        "--requeue-on-time-limit",
        "1",
        "--",
        str(script),
        str(cli.tmp / "ck-{}"),
    )

    assert done.returncode == 0, done.stdout + done.stderr
    for index in (0, 1):
        assert [(a["object_state"], a["cause"]) for a in cli.status(f"sw-{index}")["attempts"]] == [
            ("timeout", None),
            ("completed", "checkpoint"),
        ]
        assert (cli.tmp / f"ck-{index}").read_text() == "step-5\n"
