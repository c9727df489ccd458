"""Submitting a sweep as a user does (issue 23): the real ``dunscaith submit --name NAME --array/--each``, a
private home. Bad input is one line and exit 2 with nothing recorded; a good sweep records every element,
each an ordinary job NAME-<index> with its own command, then supervised."""

from __future__ import annotations

import json
import subprocess

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import fold
from tests.e2e.jobs.cli import DUNSCAITH, Cli

pytestmark = pytest.mark.slow



def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("dunscaith: ")
    return lines[0]


def recorded(cli: Cli) -> list[str]:
    done = cli.run("list", "--all", "--json")
    assert done.returncode == 0, done.stderr
    return sorted(job["job"] for job in json.loads(done.stdout)["jobs"])


def each_file(cli: Cli, text: str) -> str:
    path = cli.tmp / "each.txt"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(("args", "says"), [
    (["--array", "0-3", "--", "echo", "{}"], "a sweep needs --name NAME"),
    (["--name", "exp", "--array", "3-1", "--", "echo"], "--array '3-1': the range 3-1 ends before it starts"),
    (["--name", "exp", "--array", "0-9:0", "--", "echo"], "the step of 0-9:0 must be 1 or more"),
    (["--name", "exp", "--array", "one", "--", "echo"], "'one' is not START-END[:STEP] or N"),
    (["--name", "exp", "--array", "0-10000", "--", "echo"], "more than the 10,000 elements"),
    (["--name", "exp", "--array", "0-3,2", "--", "echo"], "index 2 is given twice"),
    (["--name", "exp", "--array", "0-3", "--each", "EACH", "--", "echo"], "give --array or --each, not both"),
    (["--max-running", "4", "--", "echo"], "--max-running is for a sweep"),
    (["--name", "exp", "--array", "0-3", "--max-running", "0", "--", "echo"], "--max-running '0': a whole number"),
    (["--name", "exp", "--array", "0-3", "--follow", "--", "echo"], "--follow shows one job's output"),
    (["--name", "exp", "--array", "0-3", "--", "echo", "{lr}"], "an --array sweep fills in only {}"),
    (["--name", "x" * 62, "--array", "0-10", "--", "echo"], "too long for its indices"),
    (["--name", "exp", "--array", "0-3", "--cpus-per-task", "0", "--", "echo"], "--cpus-per-task '0'"),
    (["--name", "exp", "--each", "NOPE", "--", "echo"], "No such file or directory"),
    (["--name", "exp", "--each", "EACH:", "--", "echo"], "no elements (every line is blank or a comment)"),
    (["--name", "exp", "--each", "EACH:# seeds\n\n", "--", "echo"], "no elements"),
    (["--name", "exp", "--each", "EACH:lr=1\nlr=2 --fast\n", "--", "echo", "{lr}"], "line 2: mixes key=value"),
    (["--name", "exp", "--each", "EACH:lr=1 seed=2\n", "--", "echo", "{lr}"], "line 1: seed= is used nowhere"),
    (["--name", "exp", "--each", "EACH:lr=1\n", "--", "echo", "{lr}", "{seed}"], "names {seed}, which this line"),
    (["--name", "exp", "--each", "EACH:'open\n", "--", "echo"], "line 1: No closing quotation"),
    (["--name", "exp", "--each", "EACH:" + "x\n" * 10_001, "--", "echo"], "more than the 10,000 elements"),
])
def test_bad_sweep_input_is_one_line_exit_2_and_records_nothing(cli: Cli, args: list[str], says: str) -> None:
    words = []
    for word in args:
        if word.startswith("EACH"):
            word = each_file(cli, word.removeprefix("EACH:") if ":" in word else "lr=1\n")
        elif word == "NOPE":
            word = str(cli.tmp / "no-such-file")
        words.append(word)
    assert says in one_line(cli.run("submit", *words))
    assert recorded(cli) == []


def test_a_taken_name_refuses_the_sweep_in_one_line_and_records_nothing_more(cli: Cli) -> None:
    assert cli.run("submit", "--name", "exp", "--array", "0-3", "--", "echo", "{}").returncode == 0
    before = recorded(cli)
    assert before == ["exp-0", "exp-1", "exp-2", "exp-3"]
    assert "a sweep named exp is already recorded" in one_line(
        cli.run("submit", "--name", "exp", "--array", "7", "--", "echo"))
    assert "a job named exp-2 is already recorded" in one_line(
        cli.run("submit", "--name", "exp-2", "--array", "0-1", "--", "echo"))
    assert "exp is the name of a recorded sweep" in one_line(cli.run("submit", "--name", "exp", "--", "echo"))
    assert recorded(cli) == before


def test_an_array_sweep_records_every_element_with_its_index_in_the_command(cli: Cli) -> None:
    done = cli.run("submit", "--name", "exp", "--array", "1-7:2", "--max-running", "2", "--mem", "64M",
                   "--parsable", "--", "sh", "-c", "echo {}", "in-{}.txt")
    assert done.stdout == "exp\n"  # --parsable: the sweep's name once every element is recorded
    assert done.returncode == 0, done.stderr  # then supervised to its outcome, the live view on stderr
    assert recorded(cli) == ["exp-1", "exp-3", "exp-5", "exp-7"]
    status = cli.status("exp-3")
    assert status["spec"]["command"] == ["sh", "-c", "echo 3", "in-3.txt"]
    assert status["state"] == "succeeded"
    assert status["spec"]["resources"], status["spec"]  # --mem applies to every element


def test_an_each_sweep_records_one_element_per_line_in_file_order(cli: Cli) -> None:
    path = each_file(cli, "# learning rates\nlr=0.1 tag='a b'\n\nlr=0.2 tag=c\nlr=0.3 tag=d\nlr=0.4 tag=e\n")
    done = cli.run("submit", "--name", "lr", "--each", path, "--", "train", "--lr={lr}", "--tag", "{tag}", "{}")
    assert done.returncode == 1, done.stderr  # there is no program "train": every element fails
    assert recorded(cli) == ["lr-0", "lr-1", "lr-2", "lr-3"]
    assert cli.status("lr-0")["spec"]["command"] == ["train", "--lr=0.1", "--tag", "a b", "0"]
    assert cli.status("lr-3")["spec"]["command"] == ["train", "--lr=0.4", "--tag", "e", "3"]
    plain = each_file(cli, "--seed 1\n--seed 2 --fast\n")
    assert cli.run("submit", "--name", "seeds", "--each", plain, "--", "train").returncode == 1
    assert cli.status("seeds-1")["spec"]["command"] == ["train", "--seed", "2", "--fast"]


def test_a_script_sweep_fills_in_the_scripts_text(cli: Cli) -> None:
    script = cli.tmp / "job.sh"
    script.write_text("#!/bin/sh\necho {} ${HOME}\n")
    assert cli.run("submit", "--name", "s", "--array", "0-1", str(script)).returncode == 0
    assert recorded(cli) == ["s-0", "s-1"]
    store = SqliteStore.open(cli.root, SystemHost())  # the record itself: status shows no script's text
    try:
        assert fold(store.read(JobId("s-1"))).spec.script == "#!/bin/sh\necho 1 ${HOME}\n"
    finally:
        store.close()


def test_kill_9_while_the_elements_are_recorded_leaves_none_of_them(cli: Cli) -> None:
    done = cli.run("submit", "--name", "exp", "--array", "0-99", "--", "echo", "{}",
                   DUNSCAITH_TEST_CRASH_AT="sweep-element-recorded#50")
    assert done.returncode == -9, done.stderr
    assert recorded(cli) == []
    again = cli.run("submit", "--name", "exp", "--array", "0-99", "--", "echo", "{}")
    assert again.returncode == 0, again.stderr
    assert len(recorded(cli)) == 100


def test_completion_offers_the_sweep_flags(cli: Cli) -> None:
    done = subprocess.run([DUNSCAITH],
                          env={**cli.env(), "_DUNSCAITH_COMPLETE": "complete_bash", "COMP_WORDS": "dunscaith submit --",
                               "COMP_CWORD": "2"}, capture_output=True, text=True, timeout=60)
    offered = done.stdout.split()
    assert {"--array", "--each", "--max-running"} <= set(offered), done.stdout
