"""The opt-in recovery on a real Slurm 22.05 (issue 39), made to enforce --mem (tests/infra/slurm.py): a job
that allocates past its memory ends OUT_OF_MEMORY and is run again with twice the memory, and succeeds; a
job past its time limit with --signal-before USR1@… traps the signal, writes a checkpoint, is requeued and
resumes from it, succeeding on its second attempt."""

from __future__ import annotations

import pytest

from tests.e2e.jobs.cli import Cli
from tests.infra.slurm import SlurmTestCluster

pytestmark = [pytest.mark.slow, pytest.mark.slurm]

# touches 150 MiB (a bytes object is filled, unlike a bytearray's zeroed pages): past 100M, within 200M
GREEDY = ["python3", "-c", "x = b'x' * (150 * 2**20); print(len(x))"]

CHECKPOINTING = """#!/bin/sh
ck="$1"
if [ -f "$ck" ]; then echo "resumed from $(cat "$ck")"; exit 0; fi
trap 'echo step-5 > "$ck"; echo checkpointed' USR1
while true; do sleep 1; done
"""


def test_a_job_out_of_memory_is_run_again_with_twice_the_memory(on_slurm: Cli, slurm: SlurmTestCluster) -> None:
    if slurm.memory_enforcement != "cgroup":
        pytest.skip(
            "the test Slurm enforces --mem by OverMemoryKill here (no writable cgroup v1 memory "
            "controller): Slurm 22.05 then reports FAILED 0:9, not OUT_OF_MEMORY"
        )
    done = on_slurm.run(
        "submit",
        "--cluster",
        "test",
        "--name",
        "oom",
        "--mem",
        "100M",
        "--on-out-of-memory",
        "memory_factor=2,max_memory=1G,attempts=2",
        "--",
        *GREEDY,
        timeout=300,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    body = on_slurm.status("oom")
    assert [(a["object_state"], a["needs"], a["cause"]) for a in body["attempts"]] == [
        ("out_of_memory", ["memory=100M"], None),
        ("completed", ["memory=200M"], "out-of-memory"),
    ]
    assert body["attempts"][1]["why"] == (
        "attempt 1 ended out_of_memory: memory 100M -> 200M (recovery.on_out_of_memory, attempt 1 of 2)"
    )


def test_a_job_signalled_before_its_time_limit_checkpoints_and_resumes(on_slurm: Cli) -> None:
    script = on_slurm.tmp / "train.sh"
    script.write_text(CHECKPOINTING)
    script.chmod(0o755)
    checkpoint = on_slurm.tmp / "checkpoint"

    done = on_slurm.run(
        "submit",
        "--cluster",
        "test",
        "--name",
        "train",
        "--time",
        "1",
        "--signal-before",
        "USR1@30",
        "--requeue-on-time-limit",
        "1",
        "--",
        str(script),
        str(checkpoint),
        timeout=400,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert checkpoint.read_text() == "step-5\n"
    body = on_slurm.status("train")
    assert [(a["object_state"], a["cause"]) for a in body["attempts"]] == [
        ("timeout", None),
        ("completed", "checkpoint"),
    ]
    with open(body["attempts"][1]["stdout"]) as output:
        assert "resumed from step-5" in output.read()
