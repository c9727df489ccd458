"""CommandEscalationDelivery with real processes: JSON on stdin, exit 0 or a failed delivery."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dunscaith.adapters.process.escalation_command import CommandEscalationDelivery
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import Escalation, EscalationReason
from dunscaith.ports.escalation_delivery import DeliveryFailed

ESC = Escalation(EscalationReason.VANISHED, 2, "object 7 not listed since 12:00", datetime(2026, 1, 1, tzinfo=UTC))


def test_the_command_gets_the_escalation_as_json_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "got.json"
    CommandEscalationDelivery(["sh", "-c", f"cat > {out}"]).deliver(JobId("j"), 0, ESC)
    assert json.loads(out.read_text()) == {"job": "j", "index": 0, "reason": "vanished", "attempt": 2,
                                          "detail": "object 7 not listed since 12:00",
                                          "at": "2026-01-01T00:00:00+00:00"}


@pytest.mark.parametrize(("argv", "says"), [
    (["sh", "-c", "exit 3"], "exited 3"),
    (["/no/such/notifier"], "/no/such/notifier"),
    (["sleep", "5"], "within 0.3 s"),
])
def test_a_failed_delivery_says_why(argv: list[str], says: str) -> None:
    with pytest.raises(DeliveryFailed, match=says):
        CommandEscalationDelivery(argv, timeout=0.3).deliver(JobId("j"), 0, ESC)


def test_no_command_means_not_configured() -> None:
    assert not CommandEscalationDelivery([]).configured
    assert CommandEscalationDelivery(["true"]).configured
