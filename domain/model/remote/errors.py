"""The one root of the remote wrapper's errors (seed 001), so the edge can catch one type."""

from __future__ import annotations


class RemoteError(Exception):
    """A rule of the remote wrapper refused something; the message says what, for the user."""


class RequestNotWritten(RemoteError):
    """A termination request could not be written (a full disk, say): nothing was requested or signalled."""


class BadTerminateArguments(RemoteError):
    """``remote terminate``'s own arguments are refused (a grace or wait that is not a number of seconds
    from 0 to 30 days, an empty nonce) before the instance is read: nothing was requested or signalled."""
