"""What a transport can prove about a session that gave no final frame.

Every transport reports the same facts (the OpenSSH client through its own log, paramiko through its
exceptions); the verdict (verdict.py) is drawn from these facts only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Failure(Enum):
    """A failure that happened before authentication completed: the command was never sent."""

    AUTH = "authentication"
    HOST_KEY_CHANGED = "host key changed"
    HOST_KEY_UNKNOWN = "host key unknown"
    HOST_KEY = "host key refused"
    CONNECTION = "connection"


@dataclass(frozen=True, slots=True)
class SessionEvidence:
    # The client's own account of the session could be read. Without it nothing is proved: an empty log
    # is not proof that authentication never happened.
    accounted: bool
    # The session got past authentication (or onto an existing shared connection): the command may
    # have been sent from here on.
    reached: bool
    failure: Failure | None  # what stopped the session before it was reached
    # The exit status the host reported for the session itself, when it reported one. The stream up to
    # it was then whole. None: the session ended without one (dropped, killed by a signal, cut off).
    host_exit: int | None
    detail: str  # the client's line that decided, for the message (never a secret: ssh prints none)

    @staticmethod
    def unaccounted(detail: str) -> SessionEvidence:
        return SessionEvidence(False, False, None, None, detail)
