"""``CommandEscalationDelivery``: pass each escalation to the user's configured command.

The command gets one JSON object on stdin (job, index, reason, attempt, detail, at) and must exit 0
within the timeout; anything else is a failed delivery, which the supervisor retries later. Its
output is discarded: the escalation is already on the terminal. It runs as every delivery command does
(run_command.py): never through a shell, in a session of its own, killed with everything it started when
its time is up.
"""

from __future__ import annotations

import json

from dunscaith.adapters.escalation.run_command import CommandDelivery
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import Escalation


class CommandEscalationDelivery(CommandDelivery):
    def deliver(self, job: JobId, index: int, escalation: Escalation) -> None:
        self._run(json.dumps({"job": job, "index": index, "reason": str(escalation.reason),
                              "attempt": escalation.attempt, "detail": escalation.detail,
                              "at": escalation.at.isoformat()}).encode())
