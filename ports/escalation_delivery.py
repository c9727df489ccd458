"""Where escalations go besides the terminal: the user's configured command, if any."""

from __future__ import annotations

from typing import Protocol

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import Escalation


class DeliveryFailed(Exception):
    """The escalation did not reach its destination; it is tried again later."""


class EscalationDelivery(Protocol):
    @property
    def configured(self) -> bool:
        """False when there is nowhere to deliver to (then nothing is outstanding for delivery)."""
        ...

    def deliver(self, job: JobId, index: int, escalation: Escalation) -> None:
        """Hand one escalation over; DeliveryFailed if it did not get there."""
        ...
