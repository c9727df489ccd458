"""A store is created only by the call that creates its file; any other file is used only if it is one.

An existing ``records.db`` that is empty, is not SQLite, or has no schema is not "a new store": it is
a store that lost its contents (truncated, overwritten, replaced), and writing a fresh schema over it
would hide that every record is gone. So such a file is refused with one line saying what to do, and
nothing is written to it. The creating call holds ``schema.lock`` from before the file exists until
its schema is committed, so another opener that meets a file still being made waits for it rather
than mistaking it for a damaged one.

A creator killed before its schema is committed (kill -9 of the very first command in a new root) would
leave an empty file every later command refused. So the creator first writes ``records.db.creating``
(durable before the file exists) and removes it only once the schema is in: an empty or schema-less file
beside that marker, whose creator no longer holds the schema lock, is one that never held a record, and
the next opener makes it again (``finish_interrupted_creation``). Without the marker, such a file is
still refused.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from dunscaith.adapters.durable.lock import FlockLock, LockHeld
from dunscaith.adapters.durable.sync import sync_dir
from dunscaith.ports.job_store import StoreError

MAGIC = b"SQLite format 3\x00"
_EMPTY = "is empty (0 bytes)"
_NO_SCHEMA = "has no schema (an empty SQLite database, not a record store)"


def recovery_advice(db: Path) -> str:
    return (f"nothing was written to it: restore it from a copy, or move it aside (with any {db.name}-wal and "
            f"{db.name}-shm beside it) to start a new store; dunscaith doctor checks the root")


class StoreRefused(StoreError):
    """The store file exists but is not a usable store; the message names it and what to do."""

    def __init__(self, db: Path, why: str) -> None:
        super().__init__(f"record store {db} {why}; {recovery_advice(db)}")
        self.db = db
        self.why = why


def creating_marker(db: Path) -> Path:
    return db.with_name(db.name + ".creating")


def finish_interrupted_creation(db: Path, schema_lock: FlockLock) -> None:
    """A store file whose creator died before its schema was committed (its marker still there, the schema
    lock free) removed, so that this opener creates it; one with a schema only loses the marker. Anything
    else is left as it is (``check_existing`` judges it)."""
    marker = creating_marker(db)
    if not os.path.lexists(marker):
        return  # no creation was interrupted
    try:
        schema_lock.acquire(blocking=False)
    except LockHeld:
        return  # its creator lives: it finishes, and check_existing waits for it
    try:
        if not os.path.lexists(marker):
            return
        if os.path.lexists(db) and _problem(db) in (_EMPTY, _NO_SCHEMA):
            for leftover in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
                if os.path.lexists(leftover):
                    os.unlink(leftover)
        elif os.path.lexists(db):
            os.unlink(marker)  # its schema was committed: only the marker's removal was cut short
        sync_dir(db.parent)
    except OSError as exc:
        raise StoreError(f"record store {db}: an interrupted creation cannot be finished: "
                         f"{exc.strerror or exc}") from None
    finally:
        schema_lock.release()


def created_whole(db: Path) -> None:
    """The schema of the store this call created is committed: its creation marker goes."""
    try:
        os.unlink(creating_marker(db))
        sync_dir(db.parent)
    except FileNotFoundError:
        pass


def create_exclusively(db: Path, schema_lock: FlockLock) -> bool:
    """Create ``db`` (0600, never through a symlink) under the schema lock; True if this call made it.

    A True return leaves the lock held: the caller makes the schema, then calls ``created_whole`` and
    releases it.
    """
    if os.path.lexists(db):
        return False
    schema_lock.acquire(blocking=True)
    try:
        if not os.path.lexists(db):  # durable before the file: a kill from here on is seen as one
            os.close(os.open(creating_marker(db), os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
            sync_dir(db.parent)
        fd = os.open(db, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        schema_lock.release()  # another opener made it first, and finished: it held this lock throughout
        return False
    except OSError as exc:
        schema_lock.release()
        raise StoreError(f"record store {db} cannot be created: {exc.strerror or exc}") from None
    os.close(fd)
    sync_dir(db.parent)
    return True


def check_existing(db: Path, schema_lock: FlockLock) -> None:
    """Refuse an existing file that is not a store of some schema; writes nothing, to it or beside it."""
    if _problem(db) is None:
        return
    # It may be a store still being made: its creator holds the schema lock until its schema is in.
    schema_lock.acquire(blocking=True)
    schema_lock.release()
    problem = _problem(db)
    if problem is not None:
        raise StoreRefused(db, problem)


def _problem(db: Path) -> str | None:
    try:
        fd = os.open(db, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(db):
            raise StoreError(f"record store {db} is a symbolic link; refusing to open it") from None
        raise StoreError(f"record store {db} cannot be opened: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not _is_regular(st.st_mode):
            raise StoreError(f"record store {db} cannot be used: it is not a regular file; move it aside")
        if st.st_size == 0:
            return _EMPTY
        if os.pread(fd, len(MAGIC), 0) != MAGIC:
            return "is not a SQLite database (damaged, or another program's file)"
    finally:
        os.close(fd)
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        return f"cannot be read as SQLite ({exc})"
    try:
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    except sqlite3.OperationalError as exc:
        message = str(exc).splitlines()[0]
        if "malformed" in message or "corrupt" in message or "not a database" in message:
            return f"is damaged ({message})"
        raise StoreError(unreadable_now(db, message)) from None  # a full disk is no damage: never "move it aside"
    except sqlite3.DatabaseError as exc:
        return f"is damaged ({str(exc).splitlines()[0]})"
    except UnicodeDecodeError:  # a damaged byte in a table's name
        return "is damaged (its schema holds text that is not UTF-8)"
    finally:
        conn.close()
    if not tables:
        return _NO_SCHEMA
    if ("alembic_version",) not in tables:
        return "is a SQLite database but not a dunscaith record store (another program's)"
    return None


def quick_check(conn: sqlite3.Connection) -> str | None:
    """SQLite's own check of every page, without the slower index cross-checks; None when it passes."""
    try:
        rows = conn.execute("PRAGMA quick_check(3)").fetchall()
    except sqlite3.DatabaseError as exc:
        return str(exc).splitlines()[0]
    found = [str(row[0]) for row in rows]
    # SQLite puts several findings in one row, a line each: one line for the user
    return None if found == ["ok"] else " ".join("; ".join(found).replace("*** in database main ***", "").split())


def unreadable_now(db: Path, message: str) -> str:
    """Why a sound store cannot be read at this moment (issue 22: SQLite's "disk I/O error" on a full disk,
    where it has no room for its shared-memory index), and that nothing was written."""
    try:
        full = os.statvfs(db.parent).f_bavail == 0
    except OSError:
        full = False
    if full:
        return (f"record store {db} cannot be read now ({message}): the disk holding it is full, and SQLite "
                f"needs a little room to read it; free some space there, and it reads again (nothing was written)")
    return f"record store {db} cannot be read now ({message}); nothing was written to it"


def no_room(root: Path) -> str | None:
    """Why nothing can be written in ``root`` now: "full" (no free block), "read-only" (a read-only mount, or
    a folder the user may not write), or None. Asked without writing anything."""
    try:
        if not os.access(root, os.W_OK):  # EROFS on a read-only mount too
            return "read-only"
        st = os.statvfs(root)
    except OSError:
        return None
    if st.f_flag & os.ST_RDONLY:
        return "read-only"
    return "full" if st.f_bavail == 0 else None


def no_room_said(why: str) -> str:
    """``no_room``'s answer as the words of a message: what it is, and what makes room."""
    if why == "full":
        return "the record root's disk is full (free some space there)"
    return "the record root is read-only"


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)
