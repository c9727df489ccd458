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
