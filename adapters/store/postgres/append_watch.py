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

A supervisor's watches share one listening connection per process (``SharedPgListener``: one
connection for a sweep's hundreds of elements, each element's channel listened to on it), never a
lock's (a lock's session carries nothing but the holders' writes and checks); a reader following one
record (``PgAppendWatch``) listens on a connection of its own. A thread blocks on the connection's
socket and a pipe that ends it: no polling, no CPU while nothing is appended. When the connection is
lost (the backend terminated, the server restarted, the network cut), every watch on it says so
(``live`` is false, and ``wake`` is called so each holder notices at once), the holders read their
records every ``supervise.poll`` again, and the thread connects anew with a growing backoff; once it
listens again it wakes every holder, whose read catches whatever was appended meanwhile.

A connection pooler in transaction mode (PgBouncer) does not pass LISTEN on: the store refuses a URL
through a pooler at open, and a listening connection that meets one (its announced backend is not the
one that answers) is refused the same way, so the holder reads every poll instead.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import Callable, Iterable
from typing import Any

import psycopg
from psycopg import sql

from dunscaith.adapters.durable.stop_pipe import close_fds, stop_thread
from dunscaith.adapters.store.postgres.locks import first_line, lock_key
from dunscaith.adapters.store.subscription import Subscription
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
    """One job's watch on a listening connection of its own: a reader following the record (``watch``, with
    ``followers``: the holder's own appends too), or a caller that wants one for a job alone."""

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], job: JobId, where: str,
                 wake: Callable[[], None], *, first_backoff: float = _FIRST_BACKOFF, followers: bool = False) -> None:
        channels = {channel(job), followers_channel(job)} if followers else {channel(job)}
        self._listening = _Listening(connect, where, channels, lambda _told: wake(), first_backoff)

    def live(self) -> bool:
        return self._listening.live()

    def close(self) -> None:
        self._listening.close()

    def release(self) -> None:
        self.close()


class SharedPgListener:
    """One listening connection for every job this process watches (a sweep's hundreds of elements, or one
    job): a thread and a connection in all, not one of each per job, so a sweep stays within the server's
    ``max_connections``. Each job's channel is listened to on it, and a notification wakes that job's
    watchers only; a lost connection wakes every watcher (each then reads every poll) and, once it listens
    again, wakes them all once more. It ends with its last subscription, as a watch of one job did."""

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], where: str, *,
                 first_backoff: float = _FIRST_BACKOFF) -> None:
        self._connect = connect
        self._where = where
        self._first_backoff = first_backoff
        self._mutex = threading.RLock()  # the subscribers; re-entered when a LISTEN brings notifications in
        self._wakes: dict[str, dict[int, Callable[[], None]]] = {}
        self._next = 0
        self._current: _Listening | None = None

    def subscribe(self, job: JobId, wake: Callable[[], None]) -> Subscription:
        """``wake`` called on each append to ``job`` by anyone but its holder, until the subscription is
        closed; StoreError when no connection can listen now (the caller reads every poll instead)."""
        name = channel(job)
        with self._mutex:
            if self._current is None:  # the first: its connection made here, so a refusal is the caller's
                self._current = _Listening(self._connect, self._where, {name, *self._wakes}, self._route,
                                           self._first_backoff)
            else:
                self._current.listen(name)
            key, self._next = self._next, self._next + 1
            self._wakes.setdefault(name, {})[key] = wake
            return Subscription(lambda: self._unsubscribe(name, key), self._current.live)

    def close(self) -> None:
        with self._mutex:
            last, self._current = self._current, None
            self._wakes.clear()
        if last is not None:
            last.close()

    def _unsubscribe(self, name: str, key: int) -> None:
        last: _Listening | None = None
        with self._mutex:
            wakes = self._wakes.get(name, {})
            wakes.pop(key, None)
            if not wakes:
                self._wakes.pop(name, None)  # still listened to until the connection ends: woken for no one
            if not self._wakes:
                last, self._current = self._current, None
        if last is not None:
            last.close()

    def _route(self, names: set[str] | None) -> None:
        """Wake the watchers of ``names``; None: every watcher (the connection was lost, or is back)."""
        with self._mutex:
            wakes = [wake for name, subscribed in self._wakes.items() if names is None or name in names
                     for wake in subscribed.values()]
        for wake in wakes:
            wake()


class _Listening:
    """One listening connection and the thread that reads it, made anew (with a growing backoff) when lost."""

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], where: str, names: set[str],
                 route: Callable[[set[str] | None], None], first_backoff: float) -> None:
        self._connect = connect
        self._where = where
        self._route = route
        self._first_backoff = first_backoff
        self._lock = threading.Lock()  # the connection: the thread's reads and a new subscriber's LISTEN
        self._names = set(names)
        self._heard: set[str] = set()
        self._conn: psycopg.Connection[Any] | None = self._open(self._names)  # in the caller: it may refuse
        self._live = threading.Event()
        self._live.set()
        try:
            self._stop_r, self._stop_w = os.pipe2(os.O_CLOEXEC)
        except OSError:
            self._conn.close()
            raise
        self._thread = threading.Thread(target=self._run, name="dunscaith-pg-listen", daemon=True)
        self._thread.start()

    def live(self) -> bool:
        return self._live.is_set()

    def listen(self, name: str) -> None:
        """Listen to one more channel. A connection found broken is the thread's to make anew (it listens to
        every channel then); a LISTEN refused on a sound one is the caller's StoreError."""
        with self._lock:
            if name in self._names:
                return
            self._names.add(name)
            conn = self._conn
            if conn is None:
                return  # being made anew: it listens to this one too
            try:
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(name)))
            except psycopg.Error as exc:
                if conn.broken or conn.closed:
                    return
                self._names.discard(name)
                raise StoreError(f"record store {self._where}: the watch of appends cannot listen: "
                                 f"{first_line(exc)}") from None
            heard, self._heard = self._heard, set()
        if heard:
            self._route(heard)

    def close(self) -> None:
        if not stop_thread(self._stop_w, self._thread):
            return
        close_fds((self._stop_r, self._stop_w))
        self._stop_w = -1

    def _run(self) -> None:
        backoff = self._first_backoff
        try:
            while True:
                if self._conn is None:
                    if self._stopped(backoff):
                        return
                    with self._lock:
                        names = set(self._names)
                    try:
                        conn = self._open(names)
                    except Exception:  # still unreachable: try again later, every watcher reading every poll
                        backoff = min(backoff * 2, _MAX_BACKOFF)
                        continue
                    try:
                        with self._lock:
                            for name in self._names - names:  # subscribed while it connected
                                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(name)))
                            self._conn = conn
                    except psycopg.Error:
                        with contextlib.suppress(Exception):
                            conn.close()
                        continue
                    backoff = self._first_backoff
                    self._live.set()
                    self._route(None)  # what was appended while it did not listen is read now
                    continue
                ready, _, _ = select.select([self._conn.pgconn.socket, self._stop_r], [], [])
                if self._stop_r in ready:
                    return
                with self._lock:
                    sound = self._consume(self._conn)
                    heard, self._heard = self._heard, set()
                if heard:
                    self._route(heard)
                if not sound:
                    self._lost()
        finally:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()

    def _consume(self, conn: psycopg.Connection[Any]) -> bool:
        """Take what the server sent, noting each channel told; False: the connection is gone."""
        pgconn = conn.pgconn
        try:
            pgconn.consume_input()
        except psycopg.Error:
            return False
        if pgconn.status != psycopg.pq.ConnStatus.OK:
            return False
        while (told := pgconn.notifies()) is not None:
            self._heard.add(told.relname.decode())
        return True

    def _lost(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        self._live.clear()
        self._route(None)  # every watcher learns at once that it must read every poll

    def _stopped(self, seconds: float) -> bool:
        ready, _, _ = select.select([self._stop_r], [], [], seconds)
        return bool(ready)

    def _open(self, names: set[str]) -> psycopg.Connection[Any]:
        return open_listening(self._connect, self._where, sorted(names),
                              on_notify=lambda told: self._heard.add(told.channel))


def open_listening(connect: Callable[[], psycopg.Connection[Any]], where: str, names: Iterable[str], *,
                   on_notify: Callable[[psycopg.Notify], None] | None = None) -> psycopg.Connection[Any]:
    """A new connection listening to ``names``, refused (StoreError) through a pooler that does not pass
    LISTEN on. ``on_notify``: told of each notification met inside a later statement's reply."""
    try:
        conn = connect()
    except psycopg.Error as exc:
        raise StoreError(f"record store {where}: the watch of appends cannot connect: {first_line(exc)}") from None
    try:
        announced = conn.info.backend_pid
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        if row is None or row[0] != announced:
            raise StoreError(
                f"record store {where}: the connection announced backend {announced} but the server "
                f"answered from backend {row[0] if row else None}: records.url goes through a connection "
                "pooler (PgBouncer or the like), which does not pass LISTEN on; connect to PostgreSQL "
                "directly (its own host and port)")
        if on_notify is not None:
            conn.add_notify_handler(on_notify)
        for name in names:
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        conn.close()
        raise StoreError(f"record store {where}: the watch of appends cannot listen: {first_line(exc)}") from None
    except BaseException:
        conn.close()
        raise
    return conn
