"""``CommandEscalationDelivery``: pass each escalation to the user's configured command.

The command gets one JSON object on stdin (job, index, reason, attempt, detail, at) and must exit 0
within the timeout; anything else is a failed delivery, which the supervisor retries later. Its
output is discarded: the escalation is already on the terminal. Never run through a shell.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import Escalation
from dunscaith.ports.escalation_delivery import DeliveryFailed


class CommandEscalationDelivery:
    def __init__(self, argv: Sequence[str] | None, timeout: float = 10.0) -> None:
        self._argv = list(argv or ())
        self._timeout = timeout

    @property
    def configured(self) -> bool:
        return bool(self._argv)

    def deliver(self, job: JobId, index: int, escalation: Escalation) -> None:
        payload = json.dumps({"job": job, "index": index, "reason": str(escalation.reason),
                              "attempt": escalation.attempt, "detail": escalation.detail,
                              "at": escalation.at.isoformat()})
        try:
            done = subprocess.run(self._argv, input=payload.encode(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=self._timeout, check=False)
        except subprocess.TimeoutExpired:
            raise DeliveryFailed(f"{self._argv[0]} did not finish within {self._timeout:g} s") from None
        except OSError as exc:
            raise DeliveryFailed(f"{self._argv[0]}: {exc.strerror or exc}") from None
        if done.returncode != 0:
            raise DeliveryFailed(f"{self._argv[0]} exited {done.returncode}")
