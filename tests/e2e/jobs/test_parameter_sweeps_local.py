"""Parameter sweeps on the local scheduler, as a user runs them: the real console script, real processes,
kill -9 of the supervisor at every step of an element's way (and mid-batch), Ctrl-C, reattaching."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli, await_condition

pytestmark = pytest.mark.slow


def _ran(cli: Cli) -> Counter[str]:
    """How many times each element's command ran (each appends its index to one file)."""
    path = cli.tmp / "ran"
    return Counter(path.read_text().split()) if path.exists() else Counter()


def _command(cli: Cli, seconds: str = "0") -> list[str]:
    return ["sh", "-c", f"echo {{}} >> {cli.tmp / 'ran'}; sleep {seconds}"]


def _elements(cli: Cli, sweep: str) -> list[dict[str, object]]:
    shown = cli.run("status", sweep, "--json")
    assert shown.returncode in (0, 1, 5), shown.stderr
    found = json.loads(shown.stdout)
    return list(found["elements"])


def test_a_sweep_runs_every_element_once_within_max_running_and_says_so(cli: Cli) -> None:
    done = cli.run("submit", "--name", "exp", "--array", "1-30", "--max-running", "5", "--", *_command(cli))
    assert done.returncode == 0, done.stderr
    assert "sweep exp: all 30 succeeded" in done.stdout
    assert _ran(cli) == Counter(str(i) for i in range(1, 31))


def test_a_sweep_with_failures_names_them_and_exits_1(cli: Cli) -> None:
    done = cli.run("submit", "--name", "exp", "--array", "1-9", "--", "sh", "-c", "test $(({} % 4)) -ne 0")
    assert done.returncode == 1, done.stderr
    assert "dunscaith: sweep exp: 7 succeeded, 2 failed: exp-4, exp-8 (dunscaith status exp --state failed)" \
        in done.stderr


def test_the_json_result_has_every_element(cli: Cli) -> None:
    done = cli.run("submit", "--name", "exp", "--array", "0-4:2", "--json", "--", "true")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["sweep"] == "exp" and result["ending"] == "outcome" and result["exit_code"] == 0
    assert [e["job"] for e in result["elements"]] == ["exp-0", "exp-2", "exp-4"]
    assert result["counts"] == {"succeeded": 3}


# Every durable step of an element's way, and a few reached mid-batch (the n-th element to reach it).
CRASHES = [
    "submitting-committed", "submitting-committed#3", "create-answered", "create-answered#4",
    "answer-committed", "answer-committed#2", "release-sent", "release-sent#3", "release-committed",
    "release-committed#5", "observation-committed", "observation-committed#7", "observation-committed#15",
    "outcome-committed", "outcome-committed#4", "settled-committed", "settled-committed#6",
    "unknown-committed", "request-answered", "residual-committed", "sweep-element-recorded#4",
    "job-recorded",
]


@pytest.mark.parametrize("point", CRASHES)
def test_kill_9_at_any_step_then_supervise_name_runs_every_element_exactly_once(cli: Cli, point: str) -> None:
    first = cli.run("submit", "--name", "exp", "--array", "1-8", "--max-running", "3", "--",
                    *_command(cli, "0.2"), DUNSCAITH_TEST_CRASH_AT=point)
    if first.returncode != -signal.SIGKILL:  # a point this sweep never reaches: it ran to its outcome
        assert first.returncode == 0, first.stderr
    recorded = cli.run("status", "exp", "--json")
    if recorded.returncode == 2:  # killed before the sweep was recorded whole: nothing is, nothing ran
        assert "no job named exp is recorded" in recorded.stderr
        assert _ran(cli) == Counter()
        return
    again = cli.run("supervise", "exp")
    assert again.returncode == 0, again.stdout + again.stderr
    await_condition(lambda: sum(_ran(cli).values()) >= 8, what="every element's command to have run")
    assert _ran(cli) == Counter(str(i) for i in range(1, 9)), point
    assert all(e["state"] == "succeeded" for e in _elements(cli, "exp"))


def test_a_real_kill_9_mid_sweep_then_supervise_settles_every_element_once(cli: Cli) -> None:
    sweep = cli.start("submit", "--name", "exp", "--array", "1-12", "--max-running", "4", "--",
                      *_command(cli, "0.5"))
    await_condition(lambda: sum(_ran(cli).values()) >= 3, what="some elements to have started")
    sweep.kill()
    sweep.communicate(timeout=30)
    again = cli.run("supervise", "exp")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _ran(cli) == Counter(str(i) for i in range(1, 13))


def test_ctrl_c_drains_starts_nothing_more_and_says_how_to_reattach(cli: Cli) -> None:
    gate = cli.tmp / "gate"
    sweep = cli.start("submit", "--name", "exp", "--array", "1-6", "--max-running", "2", "--",
                      "sh", "-c", f"echo {{}} >> {cli.tmp / 'ran'}; while [ ! -e {gate} ]; do sleep 0.1; done")
    try:
        await_condition(lambda: sum(_ran(cli).values()) == 2, what="two elements running")
        sweep.send_signal(signal.SIGINT)
        _, err = sweep.communicate(timeout=60)
        assert sweep.returncode == -signal.SIGINT, err  # ended by the signal itself: a shell shows 130
        assert "sweep exp: supervisor stopped by signal" in err and "reattach with: dunscaith supervise exp" in err
        states = Counter(str(e["state"]) for e in _elements(cli, "exp"))
        assert states["recorded"] == 4  # the four not started were never sent
    finally:
        Path(gate).touch()  # the elements started end, whatever the test found
    again = cli.run("supervise", "exp")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _ran(cli) == Counter(str(i) for i in range(1, 7))


def test_a_second_supervisor_while_the_first_lives_is_refused_in_one_line_and_takes_none(cli: Cli) -> None:
    gate = cli.tmp / "gate"
    first = cli.start("submit", "--name", "exp", "--array", "1-3", "--",
                      "sh", "-c", f"echo {{}} >> {cli.tmp / 'ran'}; while [ ! -e {gate} ]; do sleep 0.1; done")
    try:
        await_condition(lambda: sum(_ran(cli).values()) == 3, what="three elements running")
        second = cli.run("supervise", "exp")
        assert second.returncode == 2, second.stderr
        assert second.stderr == REFUSED.format(sweep="exp") and second.stdout == ""
    finally:
        gate.touch()
    _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert _ran(cli) == Counter({"1": 1, "2": 1, "3": 1})


REFUSED = ("dunscaith: sweep {sweep} is supervised by another live process (the submit or supervise of it still "
           "running, which holds every element it has not started yet): nothing was taken, and its --max-running "
           "holds; see it with: dunscaith status {sweep}\n")


def _one_at_a_time(cli: Cli) -> list[str]:
    """Each element marks itself running, notes how many are (itself included), and runs until its gate."""
    running, gates = cli.tmp / "running", cli.tmp / "gates"
    running.mkdir()
    gates.mkdir()
    return ["sh", "-c", f"echo {{}} >> {cli.tmp / 'ran'}; touch {running}/{{}}; ls {running} | wc -l >> "
            f"{cli.tmp / 'together'}; while [ ! -e {gates}/{{}} ]; do sleep 0.1; done; rm {running}/{{}}"]


def _let_each_end_in_turn(cli: Cli, indices: range) -> None:
    """Each element's gate opened once it runs, one after the other: a supervisor that started two at once
    has the second note that two run."""
    for index in indices:
        await_condition(lambda i=index: (cli.tmp / "running" / str(i)).exists(),  # type: ignore[misc]
                        what=f"element {index} to run")
        (cli.tmp / "gates" / str(index)).touch()


def _together(cli: Cli) -> list[int]:
    return [int(n) for n in (cli.tmp / "together").read_text().split()]


def test_under_its_live_supervisor_a_max_running_sweep_is_not_unattended_and_cannot_be_taken(cli: Cli) -> None:
    # Issue 38: the elements waiting for a slot were called Unattended (with advice to reattach), and the
    # advice, followed, ran two elements at once; the first supervisor then ended with exit 5.
    first = cli.start("submit", "--name", "hs3", "--array", "0-5", "--max-running", "1", "--", *_one_at_a_time(cli))
    try:
        await_condition(lambda: (cli.tmp / "running" / "0").exists(), what="element 0 to run")
        for words in (["status", "hs3"], ["list"], ["status", "hs3-4"], ["hold", "hs3-0", "--json"]):
            shown = cli.run(*words)
            assert "Unattended" not in shown.stdout + shown.stderr, (words, shown.stdout, shown.stderr)
        cli.run("release", "hs3-0")
        assert "supervised" in cli.run("list").stdout
        second = cli.run("supervise", "hs3")
        assert (second.returncode, second.stderr) == (2, REFUSED.format(sweep="hs3"))
        element = cli.run("supervise", "hs3-4")
        assert (element.returncode, element.stderr) == (2, REFUSED.format(sweep="hs3"))
        _let_each_end_in_turn(cli, range(6))
    finally:
        for index in range(6):
            (cli.tmp / "gates" / str(index)).touch()
    _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert _together(cli) == [1] * 6
    assert _ran(cli) == Counter(str(i) for i in range(6))


def test_after_kill_9_of_its_supervisor_the_next_one_still_runs_one_at_a_time(cli: Cli) -> None:
    first = cli.start("submit", "--name", "hs3", "--array", "0-5", "--max-running", "1", "--", *_one_at_a_time(cli))
    again = None
    try:
        await_condition(lambda: (cli.tmp / "running" / "0").exists(), what="element 0 to run")
        first.kill()
        first.communicate(timeout=30)
        again = cli.start("supervise", "hs3")
        _let_each_end_in_turn(cli, range(6))
        _, err = again.communicate(timeout=60)
        assert again.returncode == 0, err
    finally:
        for index in range(6):
            (cli.tmp / "gates" / str(index)).touch()
        if again is not None and again.poll() is None:
            again.kill()
    assert _together(cli) == [1] * 6
    assert _ran(cli) == Counter(str(i) for i in range(6))


def test_supervise_all_takes_every_unattended_job_and_element(cli: Cli) -> None:
    one = cli.run("submit", "--name", "solo", "--", "true", DUNSCAITH_TEST_CRASH_AT="release-committed")
    assert one.returncode == -signal.SIGKILL
    many = cli.run("submit", "--name", "exp", "--array", "1-4", "--", *_command(cli),
                   DUNSCAITH_TEST_CRASH_AT="release-committed#2")
    assert many.returncode == -signal.SIGKILL
    every = cli.run("supervise", "--all")
    assert every.returncode == 0, every.stdout + every.stderr
    assert cli.status("solo")["state"] == "succeeded"
    assert all(e["state"] == "succeeded" for e in _elements(cli, "exp"))
    assert _ran(cli) == Counter(str(i) for i in range(1, 5))


def test_supervise_all_with_nothing_unattended_says_so_in_one_line_and_shows_no_empty_view(cli: Cli) -> None:
    done = cli.run("submit", "--", "true")
    assert done.returncode == 0, done.stderr
    every = cli.run("supervise", "--all")
    assert every.returncode == 0, every.stdout + every.stderr
    assert every.stdout == ""
    assert every.stderr == "dunscaith: no Unattended job: nothing to supervise\n"
