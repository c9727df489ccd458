"""Tell a sleeping supervisor that its record was appended to: PostgreSQL's LISTEN/NOTIFY.

An append by anyone but the job's lock holder (a command's request, from any login node) calls
``pg_notify`` on the job's channel inside its own transaction; the server delivers it only once that
transaction commits, so a woken supervisor's next read sees the append. The holder's own appends notify
only the job's followers' channel (``dunscaith_follow_``...), in the same pipelined round trip: a reader
following the record (``dunscaith watch``) listens to both, the holder to its own channel only, so it is
never woken by what it wrote.

The channel is derived from the job's lock key (``dunscaith_append_`` and 16 hex digits): a valid,
short identifier whatever the job's name; two names that share a key only wake each other, which the
port allows. The payload is empty.

Each watch listens on a connection of its own, never the lock's (a lock's session carries nothing but
the holder's writes and checks). A thread blocks on that connection's socket and a pipe that ends it:
no polling, no CPU while nothing is appended. When the connection is lost (the backend terminated, the
server restarted, the network cut), the watch says so (``live`` is false, and ``wake`` is called so the
holder notices at once), the holder reads its record every ``supervise.poll`` again, and the thread
connects anew with a growing backoff; once it listens again it wakes the holder, whose read catches
whatever was appended meanwhile.

A connection pooler in transaction mode (PgBouncer) does not pass LISTEN on: the store refuses a URL
through a pooler at open, and a listening connection that meets one (its announced backend is not the
one that answers) is refused the same way, so the holder reads every poll instead.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from dunscaith.adapters.store.postgres.locks import first_line, lock_key
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.ports.job_store import StoreError

_PREFIX = "dunscaith_append_"
_FOLLOW_PREFIX = "dunscaith_follow_"
SQL_NOTIFY = "SELECT pg_notify(%s, '')"
_FIRST_BACKOFF = 1.0  # seconds before the first reconnect; doubling to _MAX_BACKOFF
_MAX_BACKOFF = 60.0


def channel(job: JobId) -> str:
    """The job's channel: an identifier of 33 characters (PostgreSQL keeps 63)."""
    return f"{_PREFIX}{lock_key(job) & 0xFFFF_FFFF_FFFF_FFFF:016x}"


def followers_channel(job: JobId) -> str:
    """Where the holder's own appends are told: only readers following the record (``watch``) listen to
    it, never the holder, so its own appends never wake it."""
    return f"{_FOLLOW_PREFIX}{lock_key(job) & 0xFFFF_FFFF_FFFF_FFFF:016x}"


class PgAppendWatch:
    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], job: JobId, where: str,
                 wake: Callable[[], None], *, first_backoff: float = _FIRST_BACKOFF, followers: bool = False) -> None:
        self._connect = connect
        # ``followers``: a reader following the record hears the holder's appends too (followers_channel)
        self._channels = (channel(job), followers_channel(job)) if followers else (channel(job),)
        self._where = where
        self._wake = wake
        self._first_backoff = first_backoff
        self._live = threading.Event()
        self._conn: psycopg.Connection[Any] | None = self._listen()  # the first one in the caller: it may refuse
        self._live.set()
        try:
            self._stop_r, self._stop_w = os.pipe2(os.O_CLOEXEC)
        except OSError:
            self._conn.close()
            raise
        self._thread = threading.Thread(target=self._run, name="dunscaith-pg-append-watch", daemon=True)
        self._thread.start()

    def live(self) -> bool:
        return self._live.is_set()

    def close(self) -> None:
        if self._stop_w < 0:
            return
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"x")
        self._thread.join()
        for fd in (self._stop_r, self._stop_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._stop_w = -1

    def release(self) -> None:
        self.close()

    # --- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = self._first_backoff
        try:
            while True:
                if self._conn is None:
                    if self._stopped(backoff):
                        return
                    try:
                        self._conn = self._listen()
                    except Exception:  # still unreachable: try again later, reading every poll meanwhile
                        backoff = min(backoff * 2, _MAX_BACKOFF)
                        continue
                    backoff = self._first_backoff
                    self._live.set()
                    self._wake()  # what was appended while it did not listen is read now
                    continue
                ready, _, _ = select.select([self._conn.pgconn.socket, self._stop_r], [], [])
                if self._stop_r in ready:
                    return
                if not self._notified(self._conn):
                    self._lost()
        finally:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()

    def _notified(self, conn: psycopg.Connection[Any]) -> bool:
        """Take what the server sent; wake once if it holds a notification. False: the connection is gone."""
        pgconn = conn.pgconn
        try:
            pgconn.consume_input()
        except psycopg.Error:
            return False
        if pgconn.status != psycopg.pq.ConnStatus.OK:
            return False
        woke = False
        while pgconn.notifies() is not None:
            woke = True
        if woke:
            self._wake()
        return True

    def _lost(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        self._live.clear()
        self._wake()  # the holder learns at once that it must read every poll

    def _stopped(self, seconds: float) -> bool:
        ready, _, _ = select.select([self._stop_r], [], [], seconds)
        return bool(ready)

    def _listen(self) -> psycopg.Connection[Any]:
        try:
            conn = self._connect()
        except psycopg.Error as exc:
            raise StoreError(f"record store {self._where}: the watch of appends cannot connect: "
                             f"{first_line(exc)}") from None
        try:
            announced = conn.info.backend_pid
            row = conn.execute("SELECT pg_backend_pid()").fetchone()
            if row is None or row[0] != announced:
                raise StoreError(
                    f"record store {self._where}: the connection announced backend {announced} but the server "
                    f"answered from backend {row[0] if row else None}: records.url goes through a connection "
                    "pooler (PgBouncer or the like), which does not pass LISTEN on; connect to PostgreSQL "
                    "directly (its own host and port)")
            for name in self._channels:
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(name)))
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"record store {self._where}: the watch of appends cannot listen: "
                             f"{first_line(exc)}") from None
        except BaseException:
            conn.close()
            raise
        return conn
