"""How a use case refuses a call: one line for the user, exit 2."""

from __future__ import annotations

from dunscaith.domain.model.qdevices.errors import QdevicesError


class CallRefused(QdevicesError):
    """The call cannot go on (bad record, blocked by a lost or open order, lock held...)."""
