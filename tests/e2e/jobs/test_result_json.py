"""``submit --json``, ``supervise --json``, ``submit --parsable`` and ``--job-exit-code`` on the local
scheduler, as a script would use them: one object on stdout (docs/json.md, a test per field), the live
view on stderr, and the job's own exit code where it was asked for (docs/exit-codes.md)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.jobs.cli import Cli, await_state


def _result(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """stdout holds exactly one JSON document, whatever the live view printed."""
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def one(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    """One home for the tests that read the same failed job."""
    tmp = tmp_path_factory.mktemp("result")
    (tmp / "home").mkdir()
    return Cli(tmp)


@pytest.fixture(scope="module")
def failed(one: Cli) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    done = one.run("submit", "--json", "--name", "r-fails", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    return done, _result(done)


def test_submit_json_keeps_the_live_view_on_stderr_and_prints_one_object(
        failed: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    done, result = failed
    assert done.returncode == 1, done.stderr  # dunscaith's own code unless --job-exit-code
    assert done.stdout.lstrip().startswith("{") and done.stdout.rstrip().endswith("}")
    assert "r-fails: outcome: failed" in done.stderr and "released to run" in done.stderr
    assert set(result) == {"job", "cluster", "ending", "outcome", "job_exit_code", "job_signal", "exit_code",
                           "exit_code_from", "attempts", "stdout", "stderr", "record", "outstanding"}


def test_the_job_and_its_cluster(failed: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    assert (failed[1]["job"], failed[1]["cluster"]) == ("r-fails", "local")


def test_the_ending_and_the_outcome(failed: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    result = failed[1]
    assert result["ending"] == "outcome" and result["outstanding"] == []
    assert result["outcome"]["result"] == "failed" and "exit code 3" in result["outcome"]["detail"]
    assert "error" not in result  # exit 1 is the job's outcome, not a failure of the command


def test_the_jobs_own_exit_code_and_whose_code_the_command_exits_with(
        failed: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    result = failed[1]
    assert (result["job_exit_code"], result["job_signal"]) == (3, None)
    assert (result["exit_code"], result["exit_code_from"]) == (1, "dunscaith")


def test_each_attempt_with_its_scheduler_object_id(
        one: Cli, failed: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    attempts = failed[1]["attempts"]
    recorded = one.status("r-fails")["attempts"]
    assert [(a["attempt"], a["object_id"]) for a in attempts] == [(a["attempt"], a["object_id"]) for a in recorded]
    assert attempts[0]["object_id"] and attempts[0]["object_id"] in failed[0].stderr  # the live view's id
    assert (attempts[0]["order"], attempts[0]["object_state"], attempts[0]["exit_code"]) == ("released", "failed", 3)


def test_the_output_paths_hold_the_jobs_output(
        failed: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    result = failed[1]
    assert Path(result["stdout"]).read_text() == "out\n"
    assert Path(result["stderr"]).read_text() == "err\n"


def test_the_record_location(one: Cli, failed: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    import socket

    record = failed[1]["record"]
    assert record == {"store": str(one.root), "backend": "sqlite", "host": socket.gethostname()}


def test_supervise_json_of_an_ended_job_gives_the_same_object(
        one: Cli, failed: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    again = one.run("supervise", "r-fails", "--json")
    assert again.returncode == 1, again.stderr
    assert _result(again) == failed[1]
    assert "already done" in again.stderr


def test_job_exit_code_exits_with_the_jobs_own_code(cli: Cli) -> None:
    done = cli.run("submit", "--json", "--job-exit-code", "--name", "r-three", "--", "sh", "-c", "exit 3")
    assert done.returncode == 3, done.stderr
    result = _result(done)
    assert (result["exit_code"], result["exit_code_from"]) == (3, "job")
    plain = cli.run("submit", "--job-exit-code", "--name", "r-ok", "--", "true")
    assert plain.returncode == 0, plain.stderr
    assert "r-ok: outcome: succeeded" in plain.stdout  # without --json the live view stays on stdout


def test_a_job_killed_by_a_signal_exits_128_plus_n(cli: Cli) -> None:
    done = cli.run("submit", "--json", "--job-exit-code", "--name", "r-killed", "--", "sh", "-c", "kill -TERM $$")
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    result = _result(done)
    assert (result["job_exit_code"], result["job_signal"], result["exit_code_from"]) == (None, 15, "job")


def test_the_setting_asks_for_the_jobs_code_and_the_flag_overrides_it(cli: Cli) -> None:
    by_setting = cli.run("submit", "--name", "r-set", "--", "sh", "-c", "exit 7", DUNSCAITH_SUPERVISE__EXIT_CODE="job")
    assert by_setting.returncode == 7, by_setting.stderr
    overridden = cli.run("submit", "--dunscaith-exit-code", "--name", "r-over", "--", "sh", "-c", "exit 7",
                         DUNSCAITH_SUPERVISE__EXIT_CODE="job")
    assert overridden.returncode == 1, overridden.stderr
    again = cli.run("supervise", "--job-exit-code", "r-over")
    assert again.returncode == 7, again.stderr


def test_a_bad_setting_value_is_one_line_and_exit_2(cli: Cli) -> None:
    done = cli.run("submit", "--", "true", DUNSCAITH_SUPERVISE__EXIT_CODE="jobs")
    assert done.returncode == 2
    assert "supervise.exit_code" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_cancelled_running_job_exits_as_the_signal_that_stopped_it(cli: Cli) -> None:
    supervisor = cli.start("submit", "--json", "--job-exit-code", "--name", "r-cancel", "--", "sleep", "300")
    await_state(cli, "r-cancel", "running", timeout=120)
    assert cli.run("cancel", "r-cancel").returncode == 0
    out, err = supervisor.communicate(timeout=120)
    result = json.loads(out)
    assert result["outcome"]["result"] == "cancelled", err
    assert supervisor.returncode == 128 + result["job_signal"] and result["exit_code_from"] == "job"


def test_parsable_prints_the_name_once_recorded_and_only_that(cli: Cli) -> None:
    supervisor = cli.start("submit", "--parsable", "--name", "r-parse", "--", "sleep", "300")
    assert supervisor.stdout is not None
    first = supervisor.stdout.readline()  # before the job ends: it is still sleeping
    assert first == "r-parse\n"
    await_state(cli, "r-parse", "running", timeout=120)
    assert cli.run("cancel", "r-parse").returncode == 0
    out, err = supervisor.communicate(timeout=120)
    assert out == "" and "r-parse: outcome: cancelled" in err
    assert supervisor.returncode == 1


def test_json_and_parsable_together_are_refused_with_the_error_object(cli: Cli) -> None:
    done = cli.run("submit", "--json", "--parsable", "--", "true")
    assert done.returncode == 2
    assert _result(done)["error"]["code"] == "bad-input" and "--parsable" in done.stderr


def test_a_refusal_under_json_is_the_error_object(cli: Cli) -> None:
    done = cli.run("supervise", "ghost", "--json")
    assert done.returncode == 2
    assert _result(done) == {"error": {"code": "bad-input", "message": done.stderr.strip().removeprefix(
        "dunscaith: "), "exit_code": 2}}


def test_a_supervise_forwarded_to_an_unreachable_host_is_the_forwarding_error_object(cli: Cli) -> None:
    cli.pointer_of_another_host("far", "running")
    done = cli.run("supervise", "far", "--json", "--job-exit-code")
    assert done.returncode == 2, done.stderr
    result = _result(done)
    assert result["error"]["code"] == "never-ran" and result["host"] == "login2"


def test_a_supervisor_stopped_by_a_signal_prints_the_object_then_dies_by_it(cli: Cli) -> None:
    supervisor = cli.start("submit", "--json", "--name", "r-drain", "--", "sleep", "300")
    await_state(cli, "r-drain", "running", timeout=120)
    supervisor.send_signal(signal.SIGINT)
    out, _ = supervisor.communicate(timeout=120)
    assert supervisor.returncode == -signal.SIGINT
    result = json.loads(out)
    assert (result["ending"], result["outcome"], result["exit_code"]) == ("drained", None, 128 + signal.SIGINT)
    assert result["error"]["code"] == "interrupted"
    assert cli.run("cancel", "r-drain").returncode == 0
