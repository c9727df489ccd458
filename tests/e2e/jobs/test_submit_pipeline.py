"""``dunscaith submit --pipeline FILE`` as a user runs it (issue 40): a sweep -> reduce -> plot pipeline runs to
its end in one command; a failed step ends it 1 with what waits on it blocked; every refusal (the file, a
step's cluster, an option that has no meaning with --pipeline, a name taken) is one line, exit 2, with
nothing recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli
from tests.e2e.jobs.test_submit_sweep import one_line

pytestmark = pytest.mark.slow

STUDY = """\
name = "study"

[[step]]
name = "train"
command = ["sh", "-c", "echo {} > out-{}"]
array = "0-2"

[[step]]
name = "reduce"
command = "sh -c 'cat out-0 out-1 out-2 > all'"
after = ["train"]
{reduce}
[[step]]
name = "plot"
command = "sh -c 'wc -l < all > plot'"
after = ["reduce"]
"""


def study(cli: Cli, reduce: str = "", name: str = "study.toml", text: str = STUDY) -> str:
    path = cli.tmp / name
    path.write_text(text.replace("{reduce}", reduce))
    return name  # the command runs in cli.tmp: the file as a user names it there


def recorded(cli: Cli) -> list[tuple[str, str]]:
    done = cli.run("list", "--all", "--json")
    assert done.returncode == 0, done.stderr
    return sorted((job["job"], job["state"]) for job in json.loads(done.stdout)["jobs"])


def test_every_refusal_of_a_pipeline_is_one_line_exit_2_and_records_nothing(cli: Cli) -> None:
    assert cli.run("submit", "--name", "taken.reduce", "--", "true").returncode == 0
    assert cli.run("submit", "--name", "sweep", "--array", "0-1", "--", "echo", "{}").returncode == 0
    before = recorded(cli)
    good = study(cli)
    for args, says in [
        (
            ["--pipeline", study(cli, 'cluster = "hpc"', "hpc.toml")],
            "hpc.toml: step \"reduce\": cluster: no cluster named 'hpc' (configured: local)",
        ),
        (
            ["--pipeline", study(cli, "gpus = 2", "gpus.toml")],
            'gpus.toml: step "reduce": the local scheduler cannot honour --gpus',
        ),
        (
            ["--pipeline", study(cli, 'after_any = ["trian"]', "typo.toml")],
            'typo.toml: step "reduce": after_any: no step named "trian" (did you mean "train"?)',
        ),
        (["--pipeline", "missing.toml"], "missing.toml: No such file or directory"),
        (["--pipeline", good, "--", "true"], "give --pipeline FILE or a command, not both"),
        (["--pipeline", good, "--array", "0-2"], "--array is not for --pipeline"),
        (["--pipeline", good, "--after", "sweep"], "--after is not for --pipeline"),
        (["--pipeline", good, "--mem", "1G"], "--mem is not for --pipeline"),
        (["--pipeline", good, "--follow"], "--follow is not for --pipeline"),
        (["--pipeline", good, "--job-exit-code"], "--job-exit-code is not for --pipeline"),
        (["--pipeline", good, "--json", "--parsable"], "give --json or --parsable, not both"),
        (
            ["--pipeline", good, "--name", "sweep"],
            "sweep is the name of a recorded job or sweep; choose another --name for the pipeline; nothing was "
            "recorded",
        ),
        (
            ["--pipeline", good, "--name", "taken"],
            "a job named taken.reduce is already recorded; choose another --name for the pipeline; nothing was "
            "recorded",
        ),
        (["--pipeline", good, "--name", "bad name"], "study.toml: --name 'bad name': use 1 to 63 letters"),
    ]:
        line = one_line(cli.run("submit", *args))
        assert says in line, (args, line)
    assert recorded(cli) == before


def test_a_sweep_reduce_plot_pipeline_runs_to_its_end_in_one_command(cli: Cli) -> None:
    done = cli.run("submit", "--pipeline", study(cli), "--parsable", timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "study\n"  # the pipeline's name alone, for a script to keep
    assert "pipeline study: all 3 steps succeeded" in done.stderr
    assert (cli.tmp / "all").read_text() == "0\n1\n2\n"
    assert (cli.tmp / "plot").read_text().strip() == "3"
    assert recorded(cli) == [
        ("study.plot", "succeeded"),
        ("study.reduce", "succeeded"),
        *((f"study.train-{i}", "succeeded") for i in range(3)),
    ]
    again = one_line(cli.run("submit", "--pipeline", "study.toml"))
    assert "a pipeline named study is already recorded; choose another --name" in again


def test_a_failed_step_ends_the_pipeline_1_with_what_waits_on_it_blocked_and_never_created(cli: Cli) -> None:
    text = STUDY.replace("echo {} > out-{}", "test {} != 1 && echo {} > out-{}")
    done = cli.run("submit", "--pipeline", study(cli, text=text), "--name", "bad", timeout=180)
    assert done.returncode == 1, done.stderr
    assert "pipeline bad: 0 of 3 steps succeeded; train failed, reduce blocked, plot blocked" in done.stderr
    states = dict(recorded(cli))
    assert states["bad.train-1"] == "failed" and states["bad.train-0"] == "succeeded"
    for step in ("bad.reduce", "bad.plot"):
        assert cli.run("events", step).stdout.count("attempt 1") == 0  # nothing was ever created for it
    assert not Path(cli.tmp / "all").exists()


@pytest.mark.parametrize("point", ["pipeline-job-recorded#4", "pipeline-job-recorded#1"])
def test_kill_9_while_the_steps_are_recorded_leaves_none_of_them(cli: Cli, point: str) -> None:
    done = cli.run("submit", "--pipeline", study(cli), DUNSCAITH_TEST_CRASH_AT=point)
    assert done.returncode == -9, done.stderr
    assert recorded(cli) == []
    again = cli.run("submit", "--pipeline", "study.toml", timeout=180)
    assert again.returncode == 0, again.stderr
    assert len(recorded(cli)) == 5
