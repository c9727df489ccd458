"""``list`` as a table and ``status`` complete (issue 24), as a user runs them: on the local scheduler and
on the real Slurm 22.05 with accounting (sacct)."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.e2e.jobs.cli import Cli, await_condition


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


# ---------------------------------------------------------------- list, local scheduler


def test_list_is_a_table_cut_to_COLUMNS_and_whole_when_piped(cli: Cli) -> None:
    assert cli.run("submit", "--name", "short", "--", "true").returncode == 0
    long_command = ["sh", "-c", "echo " + "y" * 120]
    assert cli.run("submit", "--name", "a-longer-name", "--", *long_command).returncode == 0

    piped = cli.run("list")
    assert piped.returncode == 0, piped.stderr
    header, first, second = _rows(piped.stdout)
    assert header.split() == ["NAME", "STATE", "CLUSTER", "AGE", "ELAPSED", "SUPERVISOR", "COMMAND"]
    assert first.startswith("a-longer-name  succeeded  local") and first.endswith("y" * 120 + "'")
    assert second.startswith("short          succeeded  local") and second.endswith("  true")
    assert first.index("local") == second.index("local") == header.index("CLUSTER")

    narrow = cli.run("list", COLUMNS="60")
    assert all(len(line) <= 60 for line in _rows(narrow.stdout)), narrow.stdout
    assert _rows(narrow.stdout)[1].endswith("…")

    chosen = cli.run("list", "--format", "name,elapsed")
    assert [row.split()[0] for row in _rows(chosen.stdout)] == ["NAME", "a-longer-name", "short"]
    assert _rows(chosen.stdout)[0].split() == ["NAME", "ELAPSED"]


@pytest.mark.parametrize(("args", "said"), [
    (["--format", "name,stat"], "--format 'name,stat': no column 'stat' (did you mean state?)"),
    (["--state", "runing"], "--state 'runing': no job is ever in that state (did you mean running?)"),
    (["--cluster", "locl"], "--cluster 'locl': no such cluster is configured and no job of it is recorded "
                            "(did you mean local?)"),
])
def test_a_bad_column_state_or_cluster_is_refused_in_one_line_exit_2(cli: Cli, args: list[str], said: str) -> None:
    done = cli.run("list", *args)
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and said in done.stderr, done.stderr


# ---------------------------------------------------------------- status, local scheduler


def test_status_shows_the_command_line_and_the_local_schedulers_own_times(cli: Cli) -> None:
    done = cli.run("submit", "--name", "hello", "--", "sh", "-c", "echo 'hi there'\nexit 0")
    assert done.returncode == 0, done.stderr

    shown = cli.run("status", "hello")
    assert "  command: sh -c 'echo '\"'\"'hi there'\"'\"'\\nexit 0'" in shown.stdout, shown.stdout  # escaped
    assert "(as dunscaith saw them)" in shown.stdout
    (local,) = [line for line in shown.stdout.splitlines() if line.startswith("  scheduler (local): ")]
    assert "submitted 2" in local and "started 2" in local and "ended 2" in local

    as_json = cli.status("hello")
    assert as_json["command_line"] == "sh -c 'echo '\"'\"'hi there'\"'\"'\nexit 0'"
    times = as_json["scheduler_times"]
    assert times["source"] == "local" and as_json["scheduler_times_problem"] is None
    submitted, started, ended = (datetime.fromisoformat(times[k]) for k in ("submitted", "started", "ended"))
    assert submitted <= started <= ended
    assert as_json["attempt_scheduler_times"] == {"1": times}


# ---------------------------------------------------------------- Slurm, with accounting


def _state(cli: Cli, job: str) -> str | None:
    """The job's state word, None while it is not recorded yet."""
    import json

    done = cli.run("status", job, "--json")
    return str(json.loads(done.stdout)["state"]) if done.returncode in (0, 1) and done.stdout else None


@pytest.mark.slow
@pytest.mark.slurm
def test_status_on_slurm_shows_sacct_times_beside_dunscaiths(on_slurm: Cli) -> None:
    done = on_slurm.run("submit", "--cluster", "test", "--name", "timed", "--", "sleep", "2", timeout=180)
    assert done.returncode == 0, (done.stdout, done.stderr)

    def from_sacct() -> bool:  # slurmdbd may lag slurmctld by a moment
        return (on_slurm.status("timed")["scheduler_times"] or {}).get("source") == "sacct"

    await_condition(from_sacct, 60, "the job's times in sacct")
    shown = on_slurm.status("timed")
    times = shown["scheduler_times"]
    submitted, started, ended = (datetime.fromisoformat(times[k]) for k in ("submitted", "started", "ended"))
    assert submitted <= started < ended and (ended - started).total_seconds() >= 2
    assert shown["command_line"] == "sleep 2"
    text = on_slurm.run("status", "timed").stdout
    assert "  command: sleep 2" in text and "  scheduler (sacct): submitted " in text, text


@pytest.mark.slow
@pytest.mark.slurm
def test_a_slurm_job_cancelled_while_pending_shows_no_start_anywhere(on_slurm: Cli) -> None:
    script = on_slurm.tmp / "later.sh"
    script.write_text("#!/bin/sh\n#SBATCH --begin=now+3600\ntrue\n")
    supervisor = on_slurm.start("submit", "--cluster", "test", "--name", "never", str(script))
    try:
        await_condition(lambda: _state(on_slurm, "never") == "pending", 90, "pending")
        cancelled = on_slurm.run("cancel", "never", timeout=120)
        assert cancelled.returncode == 0, (cancelled.stdout, cancelled.stderr)
    finally:
        supervisor.wait(timeout=120)

    def ended_in_the_schedulers_times() -> bool:
        return bool((on_slurm.status("never")["scheduler_times"] or {}).get("ended"))

    await_condition(ended_in_the_schedulers_times, 60, "the cancelled job's end in the scheduler's times")
    shown = on_slurm.status("never")
    assert shown["state"] == "cancelled", shown["state"]
    assert shown["times"]["started"] is None and shown["elapsed_seconds"] is None  # as dunscaith saw it
    assert shown["scheduler_times"]["started"] is None, shown["scheduler_times"]  # sacct: Start=None
    assert shown["command_line"] == "script: true"
    text = on_slurm.run("status", "never").stdout
    assert "started -" in text and "  command: script: true" in text, text
