"""A psycopg connection whose every exchange with the server has a bound on the client's side.

The server bounds its own statements (``statement_timeout``, ``lock_timeout``: target.py), but a
server whose processes are stopped (SIGSTOP, a frozen VM) enforces nothing, and its kernel still
acknowledges every byte and keepalive, so neither ``tcp_user_timeout`` nor the keepalives ever fire:
a query would wait for ever. Here each wait for the server ends after ``answer_within`` seconds;
the connection is then closed, since a statement is still in flight on it and its session cannot be
used again (for a lock's own connection that is a lost lock, as the lock rules want: locks.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.abc import PQGen

RV = TypeVar("RV")

# psycopg logs (at WARNING) what it ignored while closing a pipeline whose connection was closed under
# it; with no handler Python would print that on stderr, beside the one line the user is given.
logging.getLogger("psycopg").addHandler(logging.NullHandler())


class ServerSilent(psycopg.OperationalError):
    """The server did not answer within the bound: the connection was closed."""


class BoundedConnection(psycopg.Connection[Any]):
    answer_within: float = 10.0  # seconds; set per connection by ``open_bounded``

    def wait(self, gen: PQGen[RV], interval: float = 0.1, timeout: float | None = None) -> RV:
        if timeout is not None:  # psycopg's own bounded waits (a cancel) keep theirs
            return super().wait(gen, interval, timeout)
        try:
            return super().wait(gen, interval, self.answer_within)
        except pg_errors._WaitTimeout:  # the one exception psycopg raises for an expired wait
            self.close()  # a statement is in flight: this session is done
            raise ServerSilent(f"the server did not answer within {self.answer_within:g} s: stopped, hung or "
                               "overloaded") from None

    @contextmanager
    def patient(self, seconds: float) -> Iterator[None]:
        """A longer bound for work that reads or rewrites the whole store (doctor, a rebuild, a migration)."""
        before, self.answer_within = self.answer_within, max(seconds, self.answer_within)
        try:
            yield
        finally:
            self.answer_within = before


def open_bounded(url: str, answer_within: float, **kwargs: Any) -> BoundedConnection:
    conn = BoundedConnection.connect(url, **kwargs)
    conn.answer_within = answer_within
    return conn
