"""``resubmit JOB --memory SIZE ...`` and ``resubmit NAME --failed --memory SIZE`` as a user types them, on the
local scheduler (issue 39): a job that ran out of its memory is run again with more, as a new attempt of the
same job; status, status --json and events show each attempt's needs; a need the cluster refuses and a bad
value are one line, exit 2, with nothing recorded."""

from __future__ import annotations

import json

import pytest

from tests.e2e.jobs.cli import Cli

pytestmark = pytest.mark.slow

# touches 300 MiB for 3 s (the local scheduler's watchdog samples every second): past 100M, within 1G
HOLD = "import time; b = b'x' * (300 * 2**20); time.sleep(3)"
GREEDY = ["python3", "-c", HOLD]


def _events(cli: Cli, job: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in cli.run("events", job, "--json").stdout.splitlines()]


def test_a_job_out_of_its_memory_resubmitted_with_more_succeeds_as_its_second_attempt(cli: Cli) -> None:
    first = cli.run("submit", "--name", "big", "--mem", "100M", "--", *GREEDY)
    assert first.returncode == 1, first.stdout + first.stderr
    assert cli.status("big")["attempts"][0]["object_state"] == "out_of_memory"

    asked = cli.run("resubmit", "big", "--memory", "1G")

    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert "job big: the new attempt is made by its supervisor: dunscaith supervise big" in asked.stdout
    assert cli.status("big")["state"] == "resubmitted"
    again = cli.run("supervise", "big")
    assert again.returncode == 0, again.stdout + again.stderr
    body = cli.status("big")
    assert body["outcome"]["result"] == "succeeded"
    assert [(a["needs"], a["cause"]) for a in body["attempts"]] == [
        (["memory=100M"], None),
        (["memory=1G"], "resubmit"),
    ]
    shown = cli.run("status", "big").stdout
    assert "    needs: memory=1G  (resubmit: attempt 1 failed; resubmitted by the user with memory=1G)" in shown
    texts = [str(e["text"]) for e in _events(cli, "big")]
    assert any(t.startswith("asks to resubmit (request ") and t.endswith(" with memory=1G") for t in texts)
    made = [e for e in _events(cli, "big") if e["kind"] == "submitting"]
    assert [e["data"].get("memory_mb") for e in made if isinstance(e["data"], dict)] == [None, 1024]


def test_a_need_the_cluster_refuses_is_refused_with_nothing_recorded(cli: Cli) -> None:
    cli.run("submit", "--name", "f", "--", "false")
    before = _events(cli, "f")

    refused = cli.run("resubmit", "f", "--gpus", "1")

    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "dunscaith: job f: resubmit refused, nothing was done: the local scheduler cannot honour --gpus (gpus: gpus "
        "are not handed out here); it honours cpus, memory and a time limit; or use --cluster with a cluster whose "
        "scheduler can"
    ]
    assert _events(cli, "f") == before


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--memory", "1x", "--memory '1x': a size of at least 1K"),
        ("--memory", "0", "--memory '0': a size of at least 1K"),
        ("--cpus", "0", "--cpus '0': a whole number from 1 to 1,000,000"),
        ("--cpus", "-3", "--cpus '-3': a whole number"),
        ("--time", "25:61:00", "--time '25:61:00': minutes and seconds after a colon are 0 to 59"),
        ("--time", "soon", "--time 'soon': a time limit of at least 1 second"),
        ("--gpus", "a100:0", "--gpus 'a100:0': [TYPE:]COUNT"),
        ("--queue", "a b", "--queue 'a b': 1 to 200 letters"),
        ("--account", "", "--account '': 1 to 200 letters"),
    ],
)
def test_a_bad_need_is_one_line_and_exit_2(cli: Cli, flag: str, value: str, says: str) -> None:
    done = cli.run("resubmit", "nosuch", flag, value)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dunscaith: {says}"), done.stderr
    assert not (cli.root / "records.db").exists()


def test_the_failed_elements_of_a_sweep_run_again_with_the_needs_given(cli: Cli) -> None:
    done = cli.run(
        "submit",
        "--name",
        "exp",
        "--array",
        "0-1",
        "--mem",
        "100M",
        "--",
        "sh",
        "-c",
        f'if [ {{}} = 1 ]; then exec python3 -c "{HOLD}"; fi',
    )
    assert done.returncode == 1, done.stdout + done.stderr

    asked = cli.run("resubmit", "exp", "--failed", "--memory", "1G")

    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert "sweep exp --failed: resubmit: 1 confirmed" in asked.stdout
    assert cli.run("supervise", "exp").returncode == 0
    body = cli.status("exp-1")
    assert [a["needs"] for a in body["attempts"]] == [["memory=100M"], ["memory=1G"]]
    assert cli.status("exp-0")["attempts"][0]["needs"] == ["memory=100M"] and len(cli.status("exp-0")["attempts"]) == 1
