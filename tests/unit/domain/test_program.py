"""The one rule of what may be started as a program (issue 22 item 9), and where it is applied."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.domain.model.program import program_problem


@pytest.mark.parametrize(("argv", "says"), [
    ((), "nothing to run"),
    (("",), "the program to run is empty"),
    (("", "x"), "the program to run is empty"),
    (("sh", "a\0b"), "argument 1 of the program holds a NUL byte"),
])
def test_a_program_execve_would_refuse_is_named(argv: tuple[str, ...], says: str) -> None:
    problem = program_problem(argv)
    assert problem is not None and says in problem


@pytest.mark.parametrize("argv", [("true",), ("/bin/sh", "-c", ""), ("./x", "")])
def test_a_startable_program_passes_empty_arguments_after_it_included(argv: tuple[str, ...]) -> None:
    assert program_problem(argv) is None


def test_a_job_spec_with_an_empty_program_cannot_be_made() -> None:
    with pytest.raises(BadSpec, match="the program to run is empty"):
        JobSpec(JobId("j"), "local", "local", command=("",))
