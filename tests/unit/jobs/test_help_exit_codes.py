"""Issue 22 item 18: each command's help lists its own exit codes, not one block shared by all."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from dunscaith.entrypoints.dunscaith.app import app
from dunscaith.entrypoints.dunscaith.lazy_commands import LAZY

REQUESTS = ["hold", "release", "cancel", "give-up", "abandon", "requeue", "resubmit"]


def _codes(*command: str) -> str:
    shown = CliRunner().invoke(app, [*command, "--help"])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    return text[text.index("Exit codes:"):]


@pytest.mark.parametrize("command", ["list", "logs", "stop", "doctor", "prune", "status", *REQUESTS])
def test_a_command_that_runs_no_supervisor_lists_no_supervisor_endings(command: str) -> None:
    codes = _codes(command)
    assert "4 the supervisor gave up" not in codes and "supervise.wait" not in codes, codes


@pytest.mark.parametrize("command", ["status", "logs", "prune", "supervise", "reconcile", *REQUESTS])
def test_a_forwarded_command_says_it_exits_as_it_did_there_and_what_6_means(command: str) -> None:
    codes = _codes(command)
    assert "or a job of another host" not in codes
    assert "runs there and exits as it did" in codes and "6 the connection was lost" in codes, codes


def test_status_promises_what_it_does_0_running_or_succeeded_1_not_success() -> None:
    codes = _codes("status")
    assert "0 succeeded or no outcome yet" in codes and "1 the outcome is not success" in codes


@pytest.mark.parametrize("command", REQUESTS)
def test_a_request_command_lists_5_not_answered(command: str) -> None:
    assert "5 not answered within commands.wait" in _codes(command)


def test_submit_and_supervise_keep_the_whole_supervision_block() -> None:
    for command in ("submit", "supervise", "reconcile"):
        codes = _codes(command)
        assert "4 the supervisor gave up" in codes and "5 work outstanding" in codes


@pytest.mark.parametrize("command", sorted({*LAZY, "config show", "config path"} - {"config"}))
def test_every_command_has_exit_codes(command: str) -> None:
    assert _codes(*command.split()).startswith("Exit codes: 0")
