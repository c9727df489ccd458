"""``CommandNoticeDelivery``: pass each notice to the user's notify.command (docs/notifications.md).

The command gets one JSON object on stdin and must exit 0 within the timeout; anything else is a failed
delivery, retried later by whoever supervises or reconciles the job. It runs as every delivery command does
(run_command.py): in a session of its own, killed with everything it started when its time is up.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dunscaith.adapters.escalation.run_command import CommandDelivery
from dunscaith.ports.escalation_delivery import DeliveryFailed


class CommandNoticeDelivery(CommandDelivery):
    def deliver(self, notice_id: str, document: Mapping[str, Any]) -> None:
        if not self._argv:
            raise DeliveryFailed("no notify.command is configured")
        self._run(json.dumps({**document, "delivery_id": notice_id}).encode() + b"\n")
