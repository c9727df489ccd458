"""Issue 38: what refuses a job submitted now (``submission_problem``), while a spec recorded before the rule
still reads: an --env name given twice, a script with nothing in it."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.spec import JobSpec, submission_problem


def _spec(**given: object) -> JobSpec:
    return JobSpec(JobId("j"), "local", "local", **given)  # type: ignore[arg-type]


def test_an_env_name_given_twice_is_refused_naming_it() -> None:
    assert submission_problem(_spec(command=("true",), env=("A=1", "B=2", "A=2"))) == (
        "--env A is given twice: give each variable once")


def test_the_same_value_twice_is_still_one_name_twice() -> None:
    assert submission_problem(_spec(command=("true",), env=("A=1", "A=1"))) is not None


@pytest.mark.parametrize("script", ["", "\n", "  \n\t \n"])
def test_a_script_with_nothing_in_it_is_refused(script: str) -> None:
    assert submission_problem(_spec(script=script)) == (
        "the script has nothing in it (empty, or blank lines only): there is nothing to run")


def test_a_spec_recorded_before_the_rules_still_reads() -> None:
    # the rules live outside JobSpec: a record of a job submitted before them is still a spec
    assert _spec(script="", env=("A=1", "A=2")).env == ("A=1", "A=2")


def test_a_job_with_distinct_names_and_a_script_passes() -> None:
    assert submission_problem(_spec(script="echo hi\n", env=("A=1", "AB=2", "B=A=1"))) is None
