"""PostgresStore: every job's record in one PostgreSQL database that several login nodes share.

Same tables as the SQLite store (adapters/store/sql/tables.py), migrated by the same alembic history
on open. At run time the store speaks psycopg 3 directly: one general connection for reads and for
the writes of actors that do not hold the job's lock (a command's request), reconnected when it
breaks; and one connection per held lock (locks.py), never reconnected, that carries every write of
the lock's holder.

The store is bound to no host: any login node may open it. It is bound to its database instead: the
first open writes the server's system identifier and the database's name into ``store_identity``,
and every later open compares them with the server it reached, so a store restored or copied into
another server is refused there rather than used (as a record root's HOST file does for SQLite).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors

from dunscaith.adapters.store.event_codec import decode_time, encode_data, encode_time
from dunscaith.adapters.store.held_locks import Held
from dunscaith.adapters.store.postgres.append_watch import (
    SQL_NOTIFY,
    PgAppendWatch,
    SharedPgListener,
    channel,
    followers_channel,
)
from dunscaith.adapters.store.postgres.bounded import BoundedConnection, ServerSilent
from dunscaith.adapters.store.postgres.locks import (
    LOCK_KEY_PREFIX,
    LockSession,
    PgJobLock,
    first_line,
    key_halves,
    lock_key,
)
from dunscaith.adapters.store.postgres.schema import ensure_schema
from dunscaith.adapters.store.postgres.target import LONG_STATEMENT, PostgresTarget
from dunscaith.adapters.store.subscription import Subscription
from dunscaith.adapters.store.summary_rows import (
    COLUMNS,
    SQL_EVERY_EVENT,
    Carries,
    Line,
    Written,
    append_all,
    checked_lines,
    from_row,
    newest_first,
    snapshot_of,
    to_row,
    where,
)
from dunscaith.domain.model.jobs import snapshot
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import JobRecord, LoopHealth, RecordTail, StoreIdentity
from dunscaith.domain.model.jobs.summary import JobSummary, SummaryQuery, UnattendedJob
from dunscaith.ports.job_store import (
    Append,
    JobExists,
    LockBusy,
    LockLost,
    RecordDamaged,
    StoreError,
    UnknownJob,
)

# An append is two round trips in one pipeline: the row lock and the last seq, then the event, the job's
# summary and the commit. The job's row is locked first, in a statement of its own, so that under READ
# COMMITTED the max(seq) that follows (a new snapshot) sees the last append committed by whoever held the
# row before. The summary needs that seq (and, when this process does not carry the job, its events).
_SQL_LOCK_ROW = "SELECT id, pg_backend_pid() FROM jobs WHERE name = %s FOR UPDATE"
_SQL_CREATE_JOB = "INSERT INTO jobs (name, created_at) VALUES (%s, %s) RETURNING id, pg_backend_pid()"
_SQL_FIRST_EVENT = "INSERT INTO events (job_id, seq, at, kind, data) VALUES (%s, 1, %s, %s, %s)"
_SQL_EVENTS = (
    "SELECT e.seq, e.at, e.kind, e.data FROM events e JOIN jobs j ON j.id = e.job_id "
    "WHERE j.name = %s ORDER BY e.seq"
)
# Many jobs' records at once (read_many), by job then seq, in one statement.
_SQL_EVENTS_OF_NAMES = (
    "SELECT j.name, e.seq, e.at, e.kind, e.data FROM jobs j JOIN events e ON e.job_id = j.id "
    "WHERE j.name = ANY(%s::text[]) ORDER BY j.id, e.seq"
)
# Many jobs' locks in one statement (lock_many): each key tried once, in the order given, on the locks' session.
_SQL_TRY_LOCKS = (
    "SELECT pg_try_advisory_lock(k.key), pg_backend_pid() FROM unnest(%s::bigint[]) WITH ORDINALITY AS k(key, n) "
    "ORDER BY k.n"
)
_SQL_JOB_NAMES = "SELECT name FROM jobs ORDER BY id"
# Each named job's last seq, in one statement (each max(seq) found at the end of its job's range of the
# events' primary key).
_SQL_LAST_SEQS = (
    "SELECT j.name, (SELECT max(e.seq) FROM events e WHERE e.job_id = j.id) FROM jobs j "
    "WHERE j.name = ANY(%s::text[])"
)
# The job's summary, rewritten in the transaction of each of its appends (adapters/store/summary_rows.py).
# The last seq is read in a statement of its own after the row lock (a new snapshot), so it is the true one.
_SQL_LAST_SEQ = "SELECT coalesce(max(seq), 0) FROM events WHERE job_id = (SELECT id FROM jobs WHERE name = %s)"
_SQL_ADD_EVENT = "INSERT INTO events (job_id, seq, at, kind, data) VALUES (%s, %s, %s, %s, %s)"
_SQL_JOB_ID = "SELECT id FROM jobs WHERE name = %s"
_SQL_JOB_EVENTS_AFTER = "SELECT seq, at, kind, data FROM events WHERE job_id = %s AND seq > %s ORDER BY seq"
# A record's snapshot (domain/model/jobs/snapshot.py), and what vouches for the events it covers: all
# there, each a JSON object, checked by the server (a text that is not JSON fails the cast).
_SQL_SNAPSHOT = "SELECT seq, data FROM snapshots WHERE job_id = %s"
_SQL_COVERED = (
    "SELECT count(*), count(*) FILTER (WHERE json_typeof(data::json) = 'object') FROM events "
    "WHERE job_id = %s AND seq <= %s"
)
_SQL_PUT_SNAPSHOT = (
    "INSERT INTO snapshots (job_id, seq, data) VALUES (%s, %s, %s) "
    "ON CONFLICT (job_id) DO UPDATE SET seq = excluded.seq, data = excluded.data"
)
_SQL_DROP_SNAPSHOTS = "DELETE FROM snapshots"
_SQL_PUT_SUMMARY = (
    f"INSERT INTO summaries (job_id, {', '.join(COLUMNS)}) VALUES (%s, {', '.join(['%s'] * len(COLUMNS))}) "
    f"ON CONFLICT (job_id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in COLUMNS)}"
)
_SUMMARIES = "FROM summaries s JOIN jobs j ON j.id = s.job_id"
_SQL_SUMMARY = f"SELECT j.name, s.{', s.'.join(COLUMNS)} {_SUMMARIES}"
_SQL_HEALTH = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND classid = %s::bigint::oid AND objid = %s::bigint::oid AND objsubid = 1), "
    "(SELECT last_loop FROM lock_beats WHERE job = %s), (SELECT next_loop FROM lock_beats WHERE job = %s)"
)
# Every wanted job's lock and beat in one statement: pg_locks is read once (it is a function scanned
# whole on each reference), its granted advisory locks of this database joined on the keys' halves.
_SQL_HEALTHS = (
    "SELECT w.job, h.classid IS NOT NULL, b.last_loop, b.next_loop "
    "FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) AS w(job, hi, lo) "
    "LEFT JOIN (SELECT DISTINCT classid::bigint AS classid, objid::bigint AS objid FROM pg_locks "
    "WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) h "
    "ON h.classid = w.hi AND h.objid = w.lo "
    "LEFT JOIN lock_beats b ON b.job = w.job"
)
# The same question for every job not settled, its lock's key made by the server (locks.lock_key: the
# first 8 bytes of sha256 over a prefix and the name, as two unsigned 32-bit halves): one statement.
_HELD = (
    "WITH held AS MATERIALIZED (SELECT DISTINCT classid::bigint AS hi, objid::bigint AS lo FROM pg_locks "
    "WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) "
)
# A job is held by its own lock or, an element, by its sweep's (the sweep's supervisor holds the elements
# waiting for a slot of --max-running so: domain/model/jobs/attendance.py); a job of its own has no sweep
# key (NULL), which matches nothing.
_NOT_HELD = (
    f"{_SUMMARIES} CROSS JOIN LATERAL (SELECT sha256(%s::bytea || convert_to(j.name, 'UTF8')) AS d, "
    "sha256(%s::bytea || convert_to(s.sweep, 'UTF8')) AS w) k "
    "WHERE NOT s.settled AND s.problem IS NULL AND NOT EXISTS (SELECT 1 FROM held h "
    "WHERE (h.hi, h.lo) IN ((('x' || encode(substr(k.d, 1, 4), 'hex'))::bit(32)::int::bigint & 4294967295, "
    "('x' || encode(substr(k.d, 5, 4), 'hex'))::bit(32)::int::bigint & 4294967295), "
    "(('x' || encode(substr(k.w, 1, 4), 'hex'))::bit(32)::int::bigint & 4294967295, "
    "('x' || encode(substr(k.w, 5, 4), 'hex'))::bit(32)::int::bigint & 4294967295))) "
    "ORDER BY s.job_id"
)
_KEY_PREFIXES = (LOCK_KEY_PREFIX, LOCK_KEY_PREFIX)  # the job's key, and its sweep's
_SQL_UNATTENDED = f"{_HELD}SELECT j.name, s.{', s.'.join(COLUMNS)} {_NOT_HELD}"
_SQL_UNATTENDED_NAMES = f"{_HELD}SELECT j.name, s.state, s.sweep {_NOT_HELD}"
_SQL_SERVER = "SELECT (SELECT system_identifier::text FROM pg_control_system()), current_database()"
_SQL_BOUND = "SELECT system_identifier, database FROM store_identity WHERE one = 1"
_SQL_BIND = (
    "INSERT INTO store_identity (one, system_identifier, database) VALUES (1, %s, %s) "
    "ON CONFLICT (one) DO NOTHING"
)


# doctor's integrity check (integrity_problem)
_SQL_HOLES = (
    "SELECT j.name, count(e.seq), coalesce(min(e.seq), 0), coalesce(max(e.seq), 0) FROM jobs j "
    "LEFT JOIN events e ON e.job_id = j.id GROUP BY j.id, j.name "
    "HAVING count(e.seq) = 0 OR min(e.seq) <> 1 OR max(e.seq) <> count(e.seq) ORDER BY j.id"
)
_SQL_TRIGGERS = (
    "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'events'::regclass AND NOT tgisinternal "
    "AND tgenabled <> 'D' AND tgname IN ('events_append_only_update', 'events_append_only_truncate')"
)
_APPEND_ONLY_TRIGGERS = 2
_SQL_IDENTITY_ROWS = "SELECT count(*) FROM store_identity"


T = TypeVar("T")


class StoreMoved(StoreError):
    """The database is not the one the store was made in (restored or copied into another server)."""


class PostgresStore:
    read_unlocked: str | None = None  # a server's store is never opened for reads only

    def __init__(self, target: PostgresTarget, *, snapshot_every: int = snapshot.EVERY) -> None:
        self.target = target
        self._where = target.location()
        self._bound_s = target.timings.statement_timeout_ms / 1000
        self._lock_bound_s = target.timings.lock_timeout_ms / 1000
        self._mutex = threading.RLock()
        self._conn: BoundedConnection | None = None
        self._held: dict[JobId, PgJobLock] = {}
        self._session: LockSession | None = None  # the one session this store's locks live on now
        self._keeping = 0  # how many ``locking`` blocks are open: the session is kept while none is held
        self._listener: SharedPgListener | None = None  # the one listening connection its watches share
        self.server: tuple[str, str] = ("", "")  # (system identifier, database), once opened
        self._carries = Carries(snapshot_every)
        try:
            with self._errors():
                conn = self._general()
                self._refuse_pooler(conn)  # before anything is read or migrated through it
                ensure_schema(conn, target)
                self.server = self._bind(conn)
        except BaseException:
            self.close()
            raise

    @classmethod
    def open(cls, target: PostgresTarget, *, snapshot_every: int = snapshot.EVERY) -> PostgresStore:
        """``snapshot_every``: how often a record's fold is kept (snapshot.EVERY; tests ask for less)."""
        return cls(target, snapshot_every=snapshot_every)

    def location(self) -> str:
        return self._where

    def close(self) -> None:
        with self._mutex:
            for lock in list(self._held.values()):
                lock.release()
            if self._session is not None:
                self._session.end("the store was closed")  # a kept one (``locking``) holds no lock
            conn, self._conn = self._conn, None
            listener, self._listener = self._listener, None
            if conn is not None:
                with suppress(Exception):
                    conn.close()
        if listener is not None:
            listener.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the record -------------------------------------------------------------------------------

    def create(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> None:
        when, encoded = encode_time(at), encode_data(data)
        try:
            with self._errors(), self._writing(job) as (conn, lock):
                job_id, pid = _one(conn.execute(_SQL_CREATE_JOB, (job, when)))
                if lock is not None:
                    lock.verify_pid(pid)
                conn.execute(_SQL_FIRST_EVENT, (job_id, when, kind, encoded))
                conn.execute(_SQL_PUT_SUMMARY, (job_id, *to_row(self._carries.start(job, at, kind, encoded))))
        except _Exists:
            raise JobExists(f"job {job} is already recorded") from None

    def append(self, job: JobId, at: datetime, kind: str, data: Mapping[str, Any]) -> int:
        when, encoded = encode_time(at), encode_data(data)
        with (
            self._carries.forgotten_unless_committed([job]),
            self._errors(),
            self._writing(job, pipelined=True) as (conn, lock),
        ):
            return self._add(conn, {job: lock} if lock is not None else {}, [(job, at, when, kind, encoded)])[0]

    def append_many(self, appends: Sequence[Append]) -> list[int]:
        return append_all(self._carries, appends, self._add_all)

    def _add_all(self, lines: Sequence[Line], jobs: Sequence[JobId]) -> list[int]:
        with self._errors(), self._writing_all(jobs) as (conn, locks):
            return self._add(conn, locks, lines)

    def _add(self, conn: psycopg.Connection[Any], locks: Mapping[JobId, PgJobLock], lines: Sequence[Line]) -> list[int]:
        """Each event appended in the transaction at hand, in order; each job's summary (and snapshot, when one
        is due) written once, as its last event of these leaves it, and each job's holder (or followers)
        woken once: one row per job, not one per event."""
        written = Written(self._carries)
        for job, at, when, kind, encoded in lines:
            known = written.last.get(job)
            if known is None:
                found = conn.execute(_SQL_LOCK_ROW, (job,))
                seq_now = conn.execute(_SQL_LAST_SEQ, (job,))
                row = found.fetchone()  # one round trip for both
                if row is None:
                    raise UnknownJob(f"no job named {job} is recorded")
                lock = locks.get(job)
                if lock is not None:
                    lock.verify_pid(row[1])
                known = (int(row[0]), int(_one(seq_now)[0]))
            job_id, seq = known[0], known[1] + 1
            written.step(job, job_id, seq, at, kind, encoded, _Rows(conn, job_id))
            conn.execute(_SQL_ADD_EVENT, (job_id, seq, when, kind, encoded))
        for row in written.summary_rows():
            conn.execute(_SQL_PUT_SUMMARY, row)
        for row in written.snapshot_rows():
            conn.execute(_SQL_PUT_SNAPSHOT, row)
        for job in written.last:
            # wakes the job's holder once this commits (append_watch.py), when it did not write it; the
            # holder's own appends wake only those following the record (``watch``), on a channel of theirs
            conn.execute(SQL_NOTIFY, (channel(job) if job not in locks else followers_channel(job),))
        return written.seqs

    def read(self, job: JobId) -> JobRecord:
        with self._errors():
            rows = self._reading(lambda conn: conn.execute(_SQL_EVENTS, (job,)).fetchall())
        if not rows:  # a job is created with its first event, in one transaction
            raise UnknownJob(f"no job named {job} is recorded")
        return JobRecord(job=job, events=checked_lines(job, rows, 0, self._where))

    def read_many(self, jobs: Sequence[JobId]) -> dict[JobId, JobRecord]:
        names = list(dict.fromkeys(jobs))
        if not names:
            return {}
        with self._errors():
            rows = self._reading(lambda conn: conn.execute(_SQL_EVENTS_OF_NAMES, (names,)).fetchall())
        rows_of: dict[str, list[Any]] = {}
        for name, seq, at, kind, data in rows:
            rows_of.setdefault(name, []).append((seq, at, kind, data))
        records: dict[JobId, JobRecord] = {}
        for job in names:
            if job in rows_of:  # a job not recorded is left out
                with suppress(RecordDamaged):  # its damage only: read of it says where
                    records[job] = JobRecord(job=job, events=checked_lines(job, rows_of[job], 0, self._where))
        return records

    def read_tail(self, job: JobId) -> RecordTail:
        # Statements of their own (each one snapshot): the events are append-only, so the lines read after
        # the snapshot are those after its seq whatever was appended meanwhile.
        with self._errors():
            found = self._reading(lambda conn: conn.execute(_SQL_JOB_ID, (job,)).fetchone())
            if found is None:
                raise UnknownJob(f"no job named {job} is recorded")
            job_id = int(found[0])
            kept = self._vouched_snapshot(job_id)
            after = kept[0] if kept is not None else 0
            rows = self._reading(lambda conn: conn.execute(_SQL_JOB_EVENTS_AFTER, (job_id, after)).fetchall())
        lines = checked_lines(job, rows, after, self._where)
        return RecordTail(job, kept[1] if kept is not None else None, after, lines)

    def _vouched_snapshot(self, job_id: int) -> tuple[int, dict[str, Any]] | None:
        """The job's snapshot, if the events it covers are all there and each still a JSON object (one that
        is not JSON at all fails the cast: no snapshot, and the whole record is read, which says where)."""
        try:
            kept = snapshot_of(self._reading(lambda conn: conn.execute(_SQL_SNAPSHOT, (job_id,)).fetchone()))
            if kept is None:
                return None
            count, objects = self._reading(lambda conn: _one(conn.execute(_SQL_COVERED, (job_id, kept[0]))))
        except psycopg.DataError:
            return None
        return kept if count == objects == kept[0] else None


    def jobs(self) -> list[JobId]:
        with self._errors():
            rows = self._reading(lambda conn: conn.execute(_SQL_JOB_NAMES).fetchall())
        return [JobId(name) for (name,) in rows]

    def last_seqs(self, jobs: Sequence[JobId]) -> dict[JobId, int]:
        if not jobs:
            return {}
        names = list(dict.fromkeys(jobs))
        with self._errors():
            rows = self._reading(lambda conn: conn.execute(_SQL_LAST_SEQS, (names,)).fetchall())
        return {JobId(name): int(seq) for name, seq in rows if seq is not None}

    def integrity_problem(self) -> str | None:
        """What the server can honestly say about the whole store, as one line; None when all holds (for
        ``doctor``; a job's own damage is also found by reading it, and is that job's only):

        - every job has its events numbered 1..n, none missing (the events are append-only: a hole is
          damage, or a row removed behind dunscaith's back);
        - the append-only triggers are still in place (without them a record could be rewritten);
        - the store's identity row is there (written at the first open).
        """
        with self._errors(), self._mutex, self._whole_store(self._general()) as conn:
            holes = conn.execute(_SQL_HOLES).fetchall()
            triggers = _one(conn.execute(_SQL_TRIGGERS))[0]
            identity = _one(conn.execute(_SQL_IDENTITY_ROWS))[0]
        problems = []
        if holes:
            shown = ", ".join(f"{name} ({count} event(s), numbered {low}-{high})" if count else f"{name} (no event)"
                              for name, count, low, high in holes[:5])
            more = f" and {len(holes) - 5} more" if len(holes) > 5 else ""
            problems.append(f"{len(holes)} job(s) with events missing: {shown}{more}")
        if triggers < _APPEND_ONLY_TRIGGERS:
            problems.append("the triggers that keep its events append-only are missing (dropped or disabled)")
        if identity != 1:
            problems.append("its identity row (store_identity) is missing")
        if not problems:
            return None
        return (f"record store {self._where} fails its integrity check: {'; '.join(problems)}; nothing was "
                "changed: restore the database from a backup, or give dunscaith a new one (records.url)")

    def identity(self) -> StoreIdentity:
        return StoreIdentity(backend="postgresql", location=self._where)

    # --- the summaries --------------------------------------------------------------------------

    def summary(self, job: JobId) -> JobSummary:
        with self._errors():
            row = self._reading(lambda conn: conn.execute(f"{_SQL_SUMMARY} WHERE j.name = %s", (job,)).fetchone())
        if row is None:
            raise UnknownJob(f"no job named {job} is recorded")
        return self._summary(row)

    def summaries(self, query: SummaryQuery) -> Iterator[JobSummary]:
        sql, args = newest_first(_SQL_SUMMARY, query, "%s")
        # A server-side cursor on a connection of its own, read a page at a time: memory stays flat in the
        # number of jobs, and the caller may use the store between two rows.
        with self._errors():
            conn = self.target.connect(autocommit=False)
        try:
            with self._errors(), conn.transaction(), conn.cursor(name="dunscaith_summaries") as cursor:
                cursor.itersize = 256
                cursor.execute(sql, args)
                for row in cursor:
                    yield self._summary(row)
        finally:
            conn.close()

    def count(self, query: SummaryQuery) -> int:
        clause, args = where(query, "%s")
        with self._errors():
            found = self._reading(lambda conn: _one(conn.execute(f"SELECT count(*) FROM summaries s{clause}", args)))
        return int(found[0])

    def unsettled(self) -> list[JobSummary]:
        sql = f"{_SQL_SUMMARY} WHERE NOT s.settled AND s.problem IS NULL ORDER BY s.job_id"
        with self._errors():
            rows = self._reading(lambda conn: conn.execute(sql).fetchall())
        return [self._summary(row) for row in rows]

    def unattended(self) -> list[JobSummary]:
        with self._errors():
            rows = self._reading(lambda conn: conn.execute(_SQL_UNATTENDED, _KEY_PREFIXES).fetchall())
        return [self._summary(row) for row in rows]

    def unattended_names(self) -> list[UnattendedJob]:
        with self._errors():
            rows = self._reading(lambda conn: conn.execute(_SQL_UNATTENDED_NAMES, _KEY_PREFIXES).fetchall())
        return [UnattendedJob(JobId(name), state, JobId(sweep) if sweep is not None else None)
                for name, state, sweep in rows]

    def rebuild_summaries(self) -> int:
        """Every summary folded again from its record's events, in one transaction; how many."""
        with self._errors(), self._mutex:
            with self._whole_store(self._general()) as conn:
                summaries, snapshots = self._carries.rebuilt(conn.execute(SQL_EVERY_EVENT).fetchall())
                with conn.cursor() as cursor:
                    cursor.executemany(_SQL_PUT_SUMMARY, summaries)
                    cursor.execute(_SQL_DROP_SNAPSHOTS)
                    if snapshots:
                        cursor.executemany(_SQL_PUT_SNAPSHOT, snapshots)
            self._carries.clear()
        return len(summaries)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Creates and appends inside (by actors that hold no lock: tools that build stores) are one
        transaction on the shared connection, committed on leaving."""
        with self._errors(), self._mutex:
            conn = self._general()
            try:
                with conn.transaction(), self._carries.all_kept():
                    yield
            except BaseException:
                self._carries.clear()
                raise

    def _summary(self, row: Any) -> JobSummary:
        try:
            return from_row(row[0], row[1:])
        except (ValueError, TypeError) as exc:
            raise StoreError(f"summary of job {row[0]} in {self._where} is damaged: {exc}") from None

    # --- the lock ---------------------------------------------------------------------------------

    @contextmanager
    def lock(self, job: JobId) -> Iterator[PgJobLock]:
        with self._mutex:
            if job in self._held:
                raise LockBusy(f"job {job} is locked by another actor (a live supervisor or command)")
            key = lock_key(job)
            for attempt in (1, 2):
                session = self._lock_session()
                with session.mutex:
                    try:
                        with self._errors():
                            try:
                                got, pid = _one(session.conn.execute(
                                    "SELECT pg_try_advisory_lock(%s), pg_backend_pid()", (key,)))
                            except psycopg.Error as exc:  # the session is gone, and every lock on it: not taken
                                session.end(f"its session to the server ended ({first_line(exc)})")
                                raise
                    except StoreError:
                        if attempt == 1 and session.holders <= 0 and session.kept:
                            continue  # a session kept with no lock on it (``locking``) ended idle: nothing lost
                        raise
                    if pid != session.pid:
                        session.end(f"the server answered from another session (backend {pid}, not {session.pid})")
                        raise StoreError(self._pooler_refusal())
                    if not got:
                        if session.holders <= 0 and not session.kept:
                            session.end("no lock was taken on it")
                        raise LockBusy(f"job {job} is locked by another actor (a live supervisor or command)")
                    session.holders += 1
                break
            held = PgJobLock(session, job, key, self._forget)
            self._held[job] = held
        try:
            yield held
        finally:
            held.release()

    def lock_many(self, jobs: Sequence[JobId]) -> dict[JobId, Held[PgJobLock]]:
        """Every lock asked in one statement on the locks' session, each key tried in the order given."""
        with self._mutex:
            asked = [job for job in dict.fromkeys(jobs) if job not in self._held]  # held here: busy
            if not asked:
                return {}
            keys = [lock_key(job) for job in asked]
            session, taken = self._try_locks(keys)
            held: dict[JobId, Held[PgJobLock]] = {}
            for job, key, got in zip(asked, keys, taken, strict=True):
                if got:
                    lock = PgJobLock(session, job, key, self._forget)
                    self._held[job] = lock
                    giving_back = _given_back(lock)
                    held[job] = Held(giving_back, giving_back.__enter__())
            return held

    def _try_locks(self, keys: list[int]) -> tuple[LockSession, list[bool]]:
        """``pg_try_advisory_lock`` of each key in one statement on the locks' session (counted as its
        holders), and which were taken; StoreError (none taken) as ``lock``'s."""
        for attempt in (1, 2):
            session = self._lock_session()
            with session.mutex:
                try:
                    with self._errors():
                        try:
                            rows = session.conn.execute(_SQL_TRY_LOCKS, (keys,)).fetchall()
                        except psycopg.Error as exc:  # the session is gone, and every lock on it: not taken
                            session.end(f"its session to the server ended ({first_line(exc)})")
                            raise
                except StoreError:
                    if attempt == 1 and session.holders <= 0 and session.kept:
                        continue  # a session kept with no lock on it (``locking``) ended idle: nothing lost
                    raise
                if len(rows) != len(keys) or any(pid != session.pid for _, pid in rows):
                    session.end("the server answered from another session")
                    raise StoreError(self._pooler_refusal())
                taken = [bool(got) for got, _ in rows]
                if not any(taken) and session.holders <= 0 and not session.kept:
                    session.end("no lock was taken on it")
                session.holders += sum(taken)
                return session, taken
        raise AssertionError("unreachable: the second attempt returns or raises")

    @contextmanager
    def locking(self) -> Iterator[None]:
        """The lock session is kept open while no lock is held, until the outermost ``locking`` ends (then
        it ends with its last lock, as outside): one session, not one each, for a command that takes
        many jobs' locks one after the other."""
        with self._mutex:
            self._keeping += 1
            if self._session is not None:
                self._session.kept = True
        try:
            yield
        finally:
            with self._mutex:
                self._keeping -= 1
                session = self._session
                if self._keeping == 0 and session is not None:
                    with session.mutex:
                        session.kept = False
                        if session.holders <= 0:
                            session.end("every lock on it was released")

    def _lock_session(self) -> LockSession:
        """The session this process's locks share; a new one when there is none or it ended (its locks are
        lost with it, never carried over to the new one)."""
        if self._session is not None and self._session.usable():
            return self._session
        with self._errors():
            conn = self.target.connect()
        try:
            with self._errors():
                first_pid = conn.info.backend_pid
                pid = _one(conn.execute("SELECT pg_backend_pid()"))[0]
                again = _one(conn.execute("SELECT pg_backend_pid()"))[0]
                if not first_pid == pid == again:
                    raise StoreError(self._pooler_refusal())
        except BaseException:
            conn.close()
            raise
        self._session = LockSession(conn, pid)
        self._session.kept = self._keeping > 0
        return self._session

    def _pooler_refusal(self) -> str:
        return (f"record store {self._where}: the server answered from another session within one "
                "connection: records.url seems to go through a connection pooler (PgBouncer or the "
                "like), where a job's lock cannot be proven held; connect to PostgreSQL directly")

    def health(self, job: JobId) -> LoopHealth:
        hi, lo = key_halves(lock_key(job))
        with self._errors():
            held, beat, next_beat = self._reading(lambda conn: _one(conn.execute(_SQL_HEALTH, (hi, lo, job, job))))
        return LoopHealth(held=bool(held), last_loop=_beat(beat), next_loop=_beat(next_beat))

    def watch_appends(self, job: JobId, wake: Callable[[], None]) -> Subscription:
        """The server's notice (LISTEN/NOTIFY, append_watch.py) on the one listening connection this store's
        watches share; StoreError if it cannot listen now (the caller then reads every poll interval)."""
        with self._mutex:
            if self._listener is None:
                self._listener = SharedPgListener(
                    lambda: psycopg.connect(self.target.url, autocommit=True, **self.target.connect_kwargs()),
                    self._where)
            listener = self._listener
        return listener.subscribe(job, wake)

    def follow_appends(self, job: JobId, wake: Callable[[], None]) -> PgAppendWatch:
        """Both channels of the job (a command's appends, and the holder's own); StoreError if it cannot
        listen now (the follower then reads every poll interval)."""
        return PgAppendWatch(
            lambda: psycopg.connect(self.target.url, autocommit=True, **self.target.connect_kwargs()),
            job, self._where, wake, followers=True)

    def healths(self, jobs: Sequence[JobId]) -> dict[JobId, LoopHealth]:
        if not jobs:
            return {}
        names = list(dict.fromkeys(jobs))
        halves = [key_halves(lock_key(job)) for job in names]
        params = (names, [hi for hi, _ in halves], [lo for _, lo in halves])
        with self._errors():
            rows = self._reading(lambda conn: conn.execute(_SQL_HEALTHS, params).fetchall())
        return {JobId(job): LoopHealth(held=bool(held), last_loop=_beat(beat), next_loop=_beat(next_beat))
                for job, held, beat, next_beat in rows}

    # --- helpers ----------------------------------------------------------------------------------

    def _forget(self, job: JobId) -> None:
        with self._mutex:
            self._held.pop(job, None)

    def _refuse_pooler(self, conn: psycopg.Connection[Any]) -> None:
        """A connection pooler (PgBouncer, in any pool mode) announces a backend of its own making at
        connect, not the server's: a job's lock is a server session, and through a pooler nothing proves
        that the session a lock was taken on is the one every later statement reaches (transaction
        pooling hands each transaction to any session; from here it cannot be told from session
        pooling). Refused at open, before a job is recorded, rather than at its first lock."""
        announced = conn.info.backend_pid
        answered = _one(conn.execute("SELECT pg_backend_pid()"))[0]
        if announced != answered:
            raise StoreError(
                f"record store {self._where}: the connection announced backend {announced} but the server "
                f"answered from backend {answered}: records.url goes through a connection pooler (PgBouncer or "
                "the like), where a job's lock (a session advisory lock) cannot be proven held; connect to "
                "PostgreSQL directly (its own host and port)")

    def _bind(self, conn: psycopg.Connection[Any]) -> tuple[str, str]:
        server = _one(conn.execute(_SQL_SERVER))
        bound = conn.execute(_SQL_BOUND).fetchone()
        if bound is None:
            conn.execute(_SQL_BIND, server)
            bound = _one(conn.execute(_SQL_BOUND))
        if tuple(bound) != tuple(server):
            raise StoreMoved(
                f"record store {self._where} was made in database {bound[1]} of the PostgreSQL server with system "
                f"identifier {bound[0]}, and this is database {server[1]} of server {server[0]}: it was restored "
                "or copied here; use the original (records.url), or another database for new records"
            )
        return str(server[0]), str(server[1])

    def _general(self) -> BoundedConnection:
        """The shared connection; a broken one is replaced (no lock lives on it)."""
        if self._conn is not None and (self._conn.closed or self._conn.broken):
            with suppress(Exception):
                self._conn.close()
            self._conn = None
        if self._conn is None:
            self._conn = self.target.connect()
        return self._conn

    @contextmanager
    def _writing(self, job: JobId, *, pipelined: bool = False
                 ) -> Iterator[tuple[psycopg.Connection[Any], PgJobLock | None]]:
        """One transaction, committed on leaving. The holder's writes go over its lock's session; anyone
        else's over the general connection. ``pipelined``: every statement, and the commit, in one round
        trip (their results are read after it)."""
        with self._mutex:
            lock = self._held.get(job)
        if lock is not None:
            with lock.writing(pipelined=pipelined) as conn:
                yield conn, lock
            return
        with self._mutex:
            conn = self._general()
            with conn.pipeline() if pipelined else nullcontext(), conn.transaction():
                yield conn, None

    @contextmanager
    def _writing_all(self, jobs: Sequence[JobId]
                     ) -> Iterator[tuple[psycopg.Connection[Any], dict[JobId, PgJobLock]]]:
        """One transaction for writes to every one of ``jobs``, committed on leaving: on their locks'
        one session when this process holds every one of their locks (each proven not lost first), on the
        general connection when it holds none. Some held and some not cannot be one transaction: refused."""
        with self._mutex:
            locks = {job: lock for job in jobs if (lock := self._held.get(job)) is not None}
        if not locks:
            with self._mutex:
                general = self._general()
                with general.pipeline(), general.transaction():
                    yield general, locks
            return
        if len(locks) != len(jobs):
            raise StoreError(f"record store {self._where}: one transaction cannot write both jobs whose lock "
                             "this process holds and jobs whose lock it does not")
        with PgJobLock.writing_all(list(locks.values()), pipelined=True) as conn:
            yield conn, locks

    def _reading(self, query: Callable[[psycopg.Connection[Any]], T]) -> T:
        """One statement (autocommit: one snapshot). A read found the connection broken (the server
        restarted since the last use) is asked once more on a new one: a read changes nothing."""
        with self._mutex:
            conn = self._general()
            try:
                return query(conn)
            except psycopg.OperationalError:
                if not conn.broken:
                    raise
            return query(self._general())

    @staticmethod
    @contextmanager
    def _whole_store(conn: BoundedConnection) -> Iterator[BoundedConnection]:
        """One transaction for work over every record (doctor's check, a rebuild): bounded by
        LONG_STATEMENT on both sides instead of the detection time."""
        ms = int(LONG_STATEMENT * 1000)
        with conn.patient(LONG_STATEMENT), conn.transaction():
            conn.execute(f"SET LOCAL statement_timeout = {ms}")
            conn.execute(f"SET LOCAL lock_timeout = {ms}")
            yield conn

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """What the server or libpq says, as one StoreError line naming the store (never the password)."""
        try:
            yield
        except (StoreError, _Exists):
            raise
        except pg_errors.UniqueViolation as exc:
            if exc.diag.constraint_name == "uq_jobs_name":
                raise _Exists() from None
            raise StoreError(f"record store {self._where} refused a write: {first_line(exc)}") from None
        except ServerSilent as exc:
            raise StoreError(f"record store {self._where} does not answer: {exc}") from None
        except pg_errors.LockNotAvailable:
            raise StoreError(
                f"record store {self._where} does not answer: its tables are locked by another session (VACUUM "
                "FULL, LOCK TABLE, a migration) and its wait for them reached its bound of "
                f"{self._lock_bound_s:g} s") from None
        except pg_errors.QueryCanceled as exc:
            raise StoreError(f"record store {self._where} does not answer: the server cancelled a statement "
                             f"({first_line(exc)}; the bound is {self._bound_s:g} s)") from None
        except psycopg.OperationalError as exc:
            raise StoreError(f"record store {self._where} cannot be reached: {first_line(exc)}") from None
        except psycopg.Error as exc:
            raise StoreError(f"record store {self._where}: {first_line(exc)}") from None


class _Exists(Exception):
    pass


class _Rows:
    """What an append whose carry is not current reads, in its transaction (summary_rows.RecordRows)."""

    def __init__(self, conn: psycopg.Connection[Any], job_id: int) -> None:
        self._conn, self._job_id = conn, job_id

    def snapshot(self) -> Any:
        return self._conn.execute(_SQL_SNAPSHOT, (self._job_id,)).fetchone()

    def after(self, seq: int) -> list[Any]:
        return self._conn.execute(_SQL_JOB_EVENTS_AFTER, (self._job_id, seq)).fetchall()


def _one(cursor: Any) -> Any:
    row = cursor.fetchone()
    if row is None:
        raise StoreError("the server returned no row")
    return row


__all__ = ["LockLost", "PostgresStore", "StoreMoved"]


def _beat(text: str | None) -> datetime | None:
    try:
        return decode_time(text) if text else None
    except ValueError:
        return None  # display only


@contextmanager
def _given_back(lock: PgJobLock) -> Iterator[PgJobLock]:
    """A lock ``lock_many`` took: held until the context is left, then given back (as ``lock``'s)."""
    try:
        yield lock
    finally:
        lock.release()
