"""The manual residual policy, escalation delivery that fails and is retried, and reconcile delivering
what is left: real processes, SQLite, the local scheduler."""

from __future__ import annotations

import json
import signal
from typing import Any

import pytest

from tests.e2e.jobs.cli import Cli

pytestmark = pytest.mark.slow

MANUAL = {"DUNSCAITH_RESIDUAL__POLICY": "manual"}


def _unknown_first_attempt(cli: Cli, job: str) -> None:
    """Attempt 1's create never went out (the supervisor died after committing it): unknown forever."""
    crashed = cli.run("submit", "--name", job, "--", "true", DUNSCAITH_TEST_CRASH_AT="submitting-committed")
    assert crashed.returncode == -signal.SIGKILL


def _deliver_to(cli: Cli, fail_first: bool) -> str:
    out = cli.tmp / "delivered"
    flag = cli.tmp / "failed-once"
    script = (f'if [ -e {flag} ] || [ {int(not fail_first)} = 1 ]; then cat >> {out}; echo >> {out}; '
              f'else touch {flag}; exit 1; fi')
    return json.dumps(["sh", "-c", script])


def _delivered(cli: Cli) -> list[dict[str, Any]]:
    path = cli.tmp / "delivered"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def test_under_the_manual_policy_the_unknown_attempt_escalates_and_the_record_waits_for_abandon(cli: Cli) -> None:
    _unknown_first_attempt(cli, "manual")
    carried = cli.run("supervise", "manual", env=MANUAL)
    assert carried.returncode == 5, (carried.stdout, carried.stderr)
    assert "ESCALATION (unknown-attempt)" in carried.stderr
    assert "attempt 1: unknown outcome" in carried.stderr
    status = cli.status("manual")
    assert status["outcome"]["result"] == "succeeded" and not status["settled"]
    assert not (cli.tmp / "home" / ".config" / "dunscaith" / "residual" / "manual").exists()
    abandoned = cli.run("abandon", "manual", env=MANUAL)
    assert abandoned.returncode == 0, abandoned.stderr
    status = cli.status("manual")
    assert status["settled"] and status["outcome"]["result"] == "succeeded"  # the outcome stands
    entries = cli.tmp / "home" / ".config" / "dunscaith" / "residual" / "manual"
    assert [p.name for p in entries.iterdir()] == ["attempt-1"]
    assert json.loads((entries / "attempt-1").read_text())["reason"] == "abandoned"


def test_a_failed_delivery_is_retried_and_never_holds_up_supervision(cli: Cli) -> None:
    _unknown_first_attempt(cli, "retried")
    env = {**MANUAL, "DUNSCAITH_ESCALATIONS__COMMAND": _deliver_to(cli, fail_first=True),
           "DUNSCAITH_SUPERVISE__WAIT": "8"}
    carried = cli.run("supervise", "retried", env=env)
    assert carried.returncode == 5  # the unknown attempt waits for the user under the manual policy
    reasons = sorted(str(d["reason"]) for d in _delivered(cli))
    assert (cli.tmp / "failed-once").exists()  # the first delivery failed ...
    assert reasons == ["unknown-attempt", "vanished"], reasons  # ... was retried, and each arrived once


def test_reconcile_delivers_what_an_exit_5_left_undelivered(cli: Cli) -> None:
    _unknown_first_attempt(cli, "undelivered")
    failing = {**MANUAL, "DUNSCAITH_ESCALATIONS__COMMAND": json.dumps(["sh", "-c", "exit 3"])}
    carried = cli.run("supervise", "undelivered", env=failing)
    assert carried.returncode == 5
    assert "not yet delivered" in carried.stderr
    working = {**MANUAL, "DUNSCAITH_ESCALATIONS__COMMAND": _deliver_to(cli, fail_first=False)}
    reconciled = cli.run("reconcile", "undelivered", env=working)
    assert reconciled.returncode == 5  # delivered now; the unknown attempt still waits for `abandon`
    assert sorted(d["reason"] for d in _delivered(cli)) == ["unknown-attempt", "vanished"]
    assert "not yet delivered" not in reconciled.stderr
    assert cli.run("abandon", "undelivered", env=working).returncode == 0
    again = cli.run("reconcile", "undelivered", env=working)
    assert again.returncode == 0 and cli.status("undelivered")["settled"]
