"""What the forwarding use case needs besides a transport: the caller's record of requests, its streams."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from dunscaith.domain.model.forwarding.recovery import Received, SentRequest

__all__ = ["CallerStreams", "Received", "SentRequest", "SentRequests", "UnknownRequest"]


class UnknownRequest(Exception):
    """No forwarded request of this id was recorded by this user (on any login node)."""


class SentRequestsUnusable(Exception):
    """The folder of sent requests may not be used (open to others, another's, a symlink): the user's to fix,
    never re-moded; the request is refused before anything is recorded or sent. The message names the fix."""


class SentRequests(Protocol):
    def record(self, sent: SentRequest) -> None:
        """Record a request durably, before the first byte of it goes out; never replacing one."""
        ...

    def ended(self, got: Received) -> None:
        """Record what the caller saw when the session ended."""
        ...

    def read(self, request_id: str) -> tuple[SentRequest, Received | None]:
        """The request and, if its session ended here, what was seen; UnknownRequest if none."""
        ...

    def unsettled(self, host: str) -> list[tuple[SentRequest, Received | None]]:
        """Requests to ``host`` whose outcome is not known here yet (they may have run), oldest first."""
        ...

    def settle(self, request_id: str, outcome: str) -> None:
        """Record that the host's answer about the request is known (``outcome``, for the user)."""
        ...

    def expire(self, now: datetime, kept: timedelta) -> int:
        """Remove requests whose outcome is known here and that have not changed for ``kept`` (never one
        that may have run); how many. It may skip the pass when one ran recently."""
        ...


class CallerStreams(Protocol):
    def out(self, data: bytes) -> None:
        """The forwarded command's stdout, to ours."""
        ...

    def err(self, data: bytes) -> None:
        """The forwarded command's stderr, to ours."""
        ...

    def read_input(self) -> bytes | None:
        """What the user's stdin has now, without waiting: b"" once it ended, None if nothing yet."""
        ...

    def at_terminal(self) -> bool:
        """A person is at a terminal (stdin and stderr are terminals): a prompt could be answered."""
        ...
