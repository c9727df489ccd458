"""The sbatch answer table: one test per row, and the cases no row may turn into a refusal."""

from __future__ import annotations

import pytest

from dunscaith.adapters.scheduler.slurm.sbatch_answers import (
    MAY_HAVE_REACHED,
    REFUSALS,
    AnswerRow,
    classify,
    parse_job_id,
)
from dunscaith.domain.model.jobs.objects import CreateOutcome


@pytest.mark.parametrize("row", REFUSALS, ids=lambda r: r.example[-60:])
def test_each_refusal_row_refuses_its_real_message(row: AnswerRow) -> None:
    answer = classify(1, "", row.example + "\n")
    assert answer.outcome is CreateOutcome.REFUSED
    assert row.example.strip() in answer.detail


@pytest.mark.parametrize("row", MAY_HAVE_REACHED, ids=lambda r: r.example[-60:])
def test_each_may_have_reached_row_is_unknown(row: AnswerRow) -> None:
    answer = classify(1, "", row.example + "\n")
    assert answer.outcome is CreateOutcome.UNKNOWN
    assert row.example.strip() in answer.detail


@pytest.mark.parametrize("row", MAY_HAVE_REACHED, ids=lambda r: r.example[-60:])
def test_a_line_that_proves_nothing_wins_over_a_refusal_beside_it(row: AnswerRow) -> None:
    stderr = "sbatch: error: Batch job submission failed: Invalid partition name specified\n" + row.example + "\n"
    assert classify(1, "", stderr).outcome is CreateOutcome.UNKNOWN


def test_a_timeout_is_unknown_never_a_failure() -> None:
    answer = classify(None, "", "", timed_out=True)
    assert answer.outcome is CreateOutcome.UNKNOWN
    assert "may exist" in answer.detail


@pytest.mark.parametrize("returncode", [-9, -15, None])
def test_a_killed_client_is_unknown(returncode: int | None) -> None:
    assert classify(returncode, "", "").outcome is CreateOutcome.UNKNOWN


def test_an_unparsable_success_is_unknown() -> None:
    answer = classify(0, "Submitted batch job 12\n", "")
    assert answer.outcome is CreateOutcome.UNKNOWN
    assert "without a job id" in answer.detail


def test_an_unclassified_message_is_unknown() -> None:
    answer = classify(1, "", "sbatch: error: something nobody has seen before\n")
    assert answer.outcome is CreateOutcome.UNKNOWN
    assert "something nobody has seen before" in answer.detail


def test_a_program_that_could_not_start_sent_nothing() -> None:
    answer = classify(None, "", "", spawn_error="no executable sbatch in /nowhere")
    assert answer.outcome is CreateOutcome.REFUSED
    assert "nothing was sent" in answer.detail


@pytest.mark.parametrize(("stdout", "job_id"), [("42\n", "42"), ("42;cluster_a\n", "42"), ("warning\n7\n", "7")])
def test_an_id_means_created(stdout: str, job_id: str) -> None:
    answer = classify(0, stdout, "sbatch: warning: something harmless\n")
    assert answer.outcome is CreateOutcome.CREATED
    assert answer.object_id == job_id


def test_an_id_with_a_failing_exit_still_names_the_job_it_made() -> None:
    answer = classify(1, "42\n", "sbatch: error: odd\n")
    assert answer.outcome is CreateOutcome.CREATED and answer.object_id == "42"


@pytest.mark.parametrize("stdout", ["", "abc", "42 43", "-1", "42;"])
def test_parse_job_id_refuses_what_is_not_an_id(stdout: str) -> None:
    assert parse_job_id(stdout) is None


# --- issue 22 item 1: sbatch's own option checks are refusals, quoted whole -----------------------------
@pytest.mark.parametrize(("returncode", "stderr"), [
    (1, 'sbatch: error: Invalid numeric value "0" for --cpus-per-task.\n'),
    (1, 'sbatch: error: Invalid numeric value "abc" for --cpus-per-task.\n'),
    (255, "/usr/bin/sbatch: unrecognized option '--nosuchopt'\nTry \"sbatch --help\" for more information\n"),
    (255, "sbatch: invalid option -- 'Z'\nTry \"sbatch --help\" for more information\n"),
    (255, "sbatch: option '--mem' requires an argument\nTry \"sbatch --help\" for more information\n"),
    (255, "Invalid time specification (pos=0): garbage\nsbatch: error: Invalid --begin specification\n"),
    (255, 'sbatch: error: unrecognized --cpu-freq argument "x"\nsbatch: error: Invalid --cpu-freq argument\n'),
    (1, "sbatch: error: Bad rlimit name: BOGUS\nsbatch: error: --propagate=BOGUS is not valid.\n"),
    (255, 'sbatch: error: "abc" is not a valid node count\n'),
    (1, "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n"),
], ids=lambda v: str(v)[:50])
def test_sbatchs_own_option_checks_prove_nothing_was_sent(returncode: int, stderr: str) -> None:
    answer = classify(returncode, "", stderr)
    assert answer.outcome is CreateOutcome.REFUSED, answer.detail
    said = [ln.replace("/usr/bin/sbatch:", "sbatch:") for ln in stderr.splitlines() if "--help" not in ln]
    assert all(line in answer.detail for line in said), answer.detail  # every line that matters, not the last
    assert "--help" not in answer.detail and "/usr/bin" not in answer.detail


@pytest.mark.parametrize("stderr", [
    "sbatch: error: Batch job submission failed: Unable to contact slurm controller (send failure)\n",
    "sbatch: error: Batch job submission failed: Unable to contact slurm controller (receive failure)\n",
    "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n",
    # a controller message relayed after "submission failed" never passes for sbatch's own check
    "sbatch: error: Batch job submission failed: Invalid numeric value for --nothing we know\n",
])
def test_answers_after_contact_that_prove_nothing_stay_unknown(stderr: str) -> None:
    assert classify(1, "", stderr).outcome is CreateOutcome.UNKNOWN


def test_an_unknown_answer_quotes_every_line_not_only_the_last() -> None:
    answer = classify(1, "", "sbatch: error: first odd thing\nsbatch: error: second odd thing\n")
    assert answer.outcome is CreateOutcome.UNKNOWN
    assert "first odd thing" in answer.detail and "second odd thing" in answer.detail


def test_a_flood_on_stderr_is_quoted_bounded() -> None:
    answer = classify(1, "", "".join(f"sbatch: error: line {i}\n" for i in range(50)))
    assert "line 9" in answer.detail and "line 10 " not in answer.detail and "40 more lines" in answer.detail


def test_no_controller_accepting_the_connection_proves_nothing_was_sent() -> None:
    """A wrong SLURM_CONF naming a host no controller listens on, or every controller down: refused at
    once, never 30 minutes of absence and residual entries."""
    answer = classify(1, "", "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
                             "(connect failure)\n")
    assert answer.outcome is CreateOutcome.REFUSED and "connect failure" in answer.detail
