"""When the forwarded command's worker is run in the worker's own process (forwarding_root.in_process):
only when ``execve`` would start this same install again, from this very environment."""

from __future__ import annotations

import os

import pytest

from dunscaith.domain.model.forwarding.hidden_flag import FORWARDED_ENV
from dunscaith.entrypoints.dunscaith import forwarding_root


def _AGAIN() -> None:  # the front door's main, as it hands itself in
    raise AssertionError("not run by these tests")


@pytest.fixture
def ours(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(forwarding_root, "own_binary", lambda: "/opt/d/bin/dunscaith")
    return "/opt/d/bin/dunscaith"


def test_this_dunscaith_with_this_environment_and_the_hidden_flag_runs_in_process(ours: str) -> None:
    assert forwarding_root.in_process([ours, "status", "j1"], {**os.environ, FORWARDED_ENV: "a" * 32},
                                      _AGAIN) is not None


@pytest.mark.parametrize("why", ["another binary", "no hidden flag", "a variable more", "a variable changed",
                                 "a variable less", "supervise", "reconcile"])
def test_anything_else_is_exec_d(ours: str, why: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_VARIABLE", "1")
    argv, env = [ours, "status", "j1"], {**os.environ, FORWARDED_ENV: "a" * 32}
    if why == "another binary":
        argv[0] = "/usr/local/bin/dunscaith"
    elif why == "no hidden flag":
        del env[FORWARDED_ENV]
    elif why == "a variable more":
        env["PYTHONPATH"] = "/elsewhere"  # an interpreter started with it would not be this one
    elif why in ("supervise", "reconcile"):  # a supervisor: its own interpreter, `dunscaith supervise J` in ps
        argv[1] = why
    elif why == "a variable changed":
        env["SOME_VARIABLE"] = "2"
    else:
        del env["SOME_VARIABLE"]
    assert forwarding_root.in_process(argv, env, _AGAIN) is None


def test_without_the_front_door_s_main_to_run_again_a_worker_is_exec_d(ours: str) -> None:
    # the typer `_forwarded` command (tests, a `python -m` start) has no front door to hand in
    assert forwarding_root.in_process([ours, "status", "j1"], {**os.environ, FORWARDED_ENV: "a" * 32}, None) is None
