"""Which PostgreSQL server and database, how to log in, and the session settings every connection carries.

``records.url`` is a libpq URL without a password (TLS options such as ``sslmode`` and ``sslrootcert``
pass through to libpq as they are). The password comes from ``records.password_file`` (the user's own
file, mode 0600, checked) or, with none set, from libpq itself (``~/.pgpass`` or ``PGPASSFILE``). The
password lives in a ``Secret`` whose repr hides it, is handed to libpq only as a connection argument,
and never enters a message: errors are rebuilt from libpq's own words, which never carry it.

The timings (``SessionTimings``) are what makes the per-job lock sound when the network is cut: the
client gives up on a silent server after ``client_user_timeout`` (so a holder notices within one query
after the cut), the server drops a silent client's session, and with it the lock, after
``server_user_timeout``, which must exceed the holder's detection plus the longest step it may be in
(sbatch: up to 200 s when the cluster's MessageTimeout is unknown). See docs/record-backing.md.

Every statement is bounded: the client waits at most ``answer_within`` (the detection time
``client_user_timeout``, or ``answer_floor`` if that is longer) for any answer (bounded.py: a stopped
server acknowledges bytes but answers nothing), and the server cancels a statement after 0.8 of that,
and its wait for a table's lock (``VACUUM FULL``, ``LOCK TABLE``) after 0.7, so that its own clean
error (the session kept, and a job's lock with it) comes before the client's bound (the session
closed). A supervisor whose store does not answer so learns it within one such bound per exchange,
and gives up after ``supervise.giveup`` like any other loop that cannot advance. Work that reads or
rewrites the whole store (doctor, a rebuild, a migration) has ``LONG_STATEMENT``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from dunscaith.adapters.durable.private_read import UnsafeFile, read_private
from dunscaith.domain.model.jobs.lock_timings import require_release_after_detection
from dunscaith.ports.job_store import StoreError

if TYPE_CHECKING:
    from dunscaith.adapters.store.postgres.bounded import BoundedConnection


# seconds: the bound of a statement that reads or rewrites the whole store, never one of a supervisor's loop
LONG_STATEMENT = 600.0


class TargetRefused(StoreError):
    """The configuration names no usable server (bad URL, a password in it, an unsafe password file)."""


class Secret:
    """A password: handed to libpq, never printed."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class SessionTimings:
    """Seconds (and a count) for the two ends of every session; see the module's docstring."""

    connect_timeout: int = 10
    # The holder's side: libpq's keepalives, and TCP_USER_TIMEOUT, which is what ends a query stuck
    # sending into a cut network (keepalives alone did not, measured).
    client_keepalives_idle: int = 5
    client_keepalives_interval: int = 2
    client_keepalives_count: int = 3
    client_user_timeout: float = 10.0
    # The server's side, sent in the session's own options (all are user-settable).
    server_keepalives_idle: int = 10
    server_keepalives_interval: int = 5
    server_keepalives_count: int = 6
    server_user_timeout: float = 300.0

    # Seconds: the least time the server is given to answer any statement, however short the detection
    # time (a commit waits for the server's fsync, which a busy disk can make take seconds). Not a setting:
    # a bound on a silent server is liveness (how soon it is given up on), never safety (an answer is what
    # a holder acts on, and none came).
    answer_floor: float = 10.0

    @property
    def answer_within(self) -> float:
        """The client's bound on every answer: the detection time, or the floor if that is longer."""
        return max(self.client_user_timeout, self.answer_floor)

    @property
    def statement_timeout_ms(self) -> int:
        """The server's bound on a statement: within the client's, so that its clean error comes first."""
        return max(int(self.answer_within * 800), 1)

    @property
    def lock_timeout_ms(self) -> int:
        """The server's bound on a statement's wait for a lock: within the statement's, so it is named."""
        return max(int(self.answer_within * 700), 1)

    def __post_init__(self) -> None:
        require_release_after_detection(self.server_user_timeout, self.client_user_timeout,
                                        release_name="the server's release time (server_user_timeout)",
                                        detection_name="the holder's detection time (client_user_timeout)")


@dataclass(frozen=True, slots=True)
class PostgresTarget:
    url: str  # as configured: no password in it
    password: Secret | None = None
    timings: SessionTimings = field(default_factory=SessionTimings)

    @classmethod
    def from_settings(cls, url: str, password_file: Path | None = None,
                      timings: SessionTimings | None = None) -> PostgresTarget:
        if carries_password(url):
            raise TargetRefused("records.url carries a password; remove it from the URL and put it in the file "
                                "named by records.password_file (mode 0600), or in ~/.pgpass")
        password = read_password_file(password_file) if password_file is not None else None
        return cls(url, password, timings or SessionTimings())

    def location(self) -> str:
        """For display: the server, port, user and database, never a password or an option."""
        parts = parse_url(self.url)
        user = parts.get("user") or os.environ.get("PGUSER") or _login_name()
        host = parts.get("host") or os.environ.get("PGHOST") or "localhost"
        port = parts.get("port") or os.environ.get("PGPORT") or "5432"
        database = parts.get("dbname") or os.environ.get("PGDATABASE") or user
        if "," in host or host.startswith("/"):
            return f"postgresql://{user}@[{host}]:{port}/{database}"
        return f"postgresql://{user}@{host}:{port}/{database}"

    def connect(self, *, autocommit: bool = True, answer_within: float | None = None) -> BoundedConnection:
        """A new session, every answer on it bounded (``answer_within``: seconds; the detection time)."""
        from dunscaith.adapters.store.postgres.bounded import open_bounded

        bound = self.timings.answer_within if answer_within is None else answer_within
        return open_bounded(self.url, bound, autocommit=autocommit, **self.connect_kwargs())

    def connect_kwargs(self) -> dict[str, Any]:
        """Everything libpq is given besides the URL."""
        t = self.timings
        options = " ".join((
            f"-c tcp_keepalives_idle={t.server_keepalives_idle}",
            f"-c tcp_keepalives_interval={t.server_keepalives_interval}",
            f"-c tcp_keepalives_count={t.server_keepalives_count}",
            f"-c tcp_user_timeout={int(t.server_user_timeout * 1000)}",
            "-c synchronous_commit=on",  # a commit is on the server's disk, whatever the server's default
            "-c idle_session_timeout=0",  # see docs/record-backing.md: a frozen holder keeps its lock
            "-c idle_in_transaction_session_timeout=0",
            f"-c statement_timeout={t.statement_timeout_ms}",
            f"-c lock_timeout={t.lock_timeout_ms}",
        ))
        kwargs: dict[str, Any] = {
            "connect_timeout": t.connect_timeout,
            "keepalives": 1,
            "keepalives_idle": t.client_keepalives_idle,
            "keepalives_interval": t.client_keepalives_interval,
            "keepalives_count": t.client_keepalives_count,
            "tcp_user_timeout": int(t.client_user_timeout * 1000),
            "application_name": "dunscaith",
            "options": options,
        }
        if self.password is not None:
            kwargs["password"] = self.password.reveal()
        return kwargs


def carries_password(url: str) -> bool:
    """The one rule: a password in ``records.url`` (its user part, or a ``password=`` option) is refused."""
    return "password" in parse_url(url)


def shown_url(url: str) -> str:
    """``records.url`` for display (``config show``): a password in it, wherever, replaced by ``***``.

    Masked by its text, not through libpq, so that a URL libpq refuses (``carries_password`` cannot
    parse it) is never shown with its password either."""
    split = urlsplit(url)
    netloc = split.netloc
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:***@{host}"
    query = "&".join(f"{name}=***" if name.lower() == "password" else pair
                     for pair in split.query.split("&") if pair
                     for name in (unquote(pair.partition("=")[0]),))
    return urlunsplit((split.scheme, netloc, split.path, query, split.fragment))


def parse_url(url: str) -> dict[str, str]:
    from psycopg.conninfo import conninfo_to_dict

    if not url.startswith(("postgresql://", "postgres://")):
        raise TargetRefused("records.url must be a postgresql:// URL (postgresql://USER@HOST:PORT/DATABASE)")
    try:
        parts = conninfo_to_dict(url)
    except Exception:  # libpq's message quotes the URL, which may hold a password: never shown
        raise TargetRefused("records.url is not a valid postgresql:// URL "
                            "(postgresql://USER@HOST:PORT/DATABASE?sslmode=...)") from None
    return {k: str(v) for k, v in parts.items() if v is not None}


def read_password_file(path: Path) -> Secret:
    """The first line of the user's own 0600 file, opened without following a symlink."""
    try:
        raw = read_private(path, 65536, closed_to_others=True)
    except UnsafeFile as exc:
        hint = f"; make it private: chmod 600 {path}" if "lets others" in exc.reason else ""
        raise TargetRefused(f"records.password_file {path}: {exc.reason}{hint}") from None
    except OSError as exc:
        raise TargetRefused(f"records.password_file {path} cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TargetRefused(f"records.password_file {path} is not UTF-8 text") from None
    lines = text.splitlines()
    password = lines[0] if lines else ""
    if not password:
        raise TargetRefused(f"records.password_file {path} is empty: its first line is the password")
    return Secret(password)


def _login_name() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())
