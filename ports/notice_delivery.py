"""Where notices go (docs/notifications.md): the user's notify.command, if any."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class NoticeDelivery(Protocol):
    @property
    def configured(self) -> bool:
        """False when there is nowhere to deliver to: nothing is delivered (an owed notice waits)."""
        ...

    def deliver(self, notice_id: str, document: Mapping[str, Any]) -> None:
        """Hand one notice over (``document`` holds ``notice_id`` as its delivery id); DeliveryFailed
        (ports/escalation_delivery.py) if it did not get there."""
        ...
