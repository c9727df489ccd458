"""The rows the SQL stores keep (SQLite and PostgreSQL alike); the store adapters map them to domain values.

SQLAlchemy Core tables, not ORM classes: ``sqlalchemy.orm`` costs 60-90 ms to import, on the path of
every ``dunscaith status``, and the store never needed mapped objects.
"""

from __future__ import annotations

from sqlalchemy import Boolean, CheckConstraint, Column, ForeignKey, Index, Integer, MetaData, String, Table, Text

# Named constraints from the first revision: batch migrations can only drop or alter what has a name.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)

jobs = Table(
    "jobs",
    metadata,
    Column("id", Integer, primary_key=True),  # creation order
    Column("name", String(255), unique=True, nullable=False),
    Column("created_at", String(32), nullable=False),
)

# One event line, keyed (job, seq): append-only (triggers in the schema refuse UPDATE and DELETE).
# WITHOUT ROWID: the key is the table, so an append writes one b-tree page, not a table page and an
# index page; with 1 KiB pages (engine.py) each commit's WAL frame is small and its fsync short.
events = Table(
    "events",
    metadata,
    Column("job_id", Integer, ForeignKey("jobs.id"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("at", String(32), nullable=False),  # ISO 8601, UTC, fixed width
    Column("kind", String(64), nullable=False),
    Column("data", Text, nullable=False),  # canonical JSON object
    sqlite_with_rowid=False,
)

# One row per job: its summary (domain/model/jobs/summary.py), rewritten in the transaction of every
# append, so ``list`` reads this table and never folds a record. Rebuilt from the events by revision
# 0002 and by ``rebuild_summaries``: the events stay the truth.
summaries = Table(
    "summaries",
    metadata,
    Column("job_id", Integer, ForeignKey("jobs.id"), primary_key=True),
    Column("seq", Integer, nullable=False),  # the last event it includes
    Column("state", String(32), nullable=False),
    Column("cluster", String(255), nullable=False),
    Column("adapter", String(64), nullable=False),
    Column("outcome", String(32), nullable=True),
    Column("outcome_detail", Text, nullable=False),
    Column("settled", Boolean(create_constraint=False), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("object_id", String(255), nullable=True),
    Column("recorded_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
    Column("pruned_at", String(32), nullable=True),
    Column("outstanding", Integer, nullable=False),
    Column("undelivered", Integer, nullable=False),
    Column("problem", Text, nullable=True),
    # the sweep the job is an element of, and its index (0005; from its first event): NULL for a job of its own
    Column("sweep", String(255), nullable=True),
    Column("sweep_index", Integer, nullable=True),
    # the Unattended notice asks for the records not settled: few, found without a scan
    Index("ix_summaries_settled", "settled"),
    # list leaves pruned jobs out and says how many more it did not show: a count over this index
    Index("ix_summaries_pruned_at", "pruned_at"),
    # status NAME and list ask for one sweep's elements: found without a scan (0005)
    Index("ix_summaries_sweep", "sweep"),
)

# One row per job: the newest folded snapshot of its record (domain/model/jobs/snapshot.py), the state
# after event ``seq``, written in the transaction of every append whose seq is a multiple of
# snapshot.EVERY, so ``status`` of a long record folds only the events after it. A table of its own:
# the summary row is rewritten by every append, and a snapshot (the state's size) only now and then.
# Rebuilt from the events by revision 0003 and by ``rebuild_summaries``; a cache, never the truth.
snapshots = Table(
    "snapshots",
    metadata,
    Column("job_id", Integer, ForeignKey("jobs.id"), primary_key=True),
    Column("seq", Integer, nullable=False),  # the last event it covers
    Column("data", Text, nullable=False),  # canonical JSON object
)

# Only PostgreSQL keeps these: SQLite's lock is a file, which carries the beat, and its root's HOST file
# says which store it is. Declared apart so that a SQLite schema never grows them.
postgres_only = MetaData(naming_convention=NAMING)

# The time a job's lock holder last completed its loop (display only), written over the lock's session.
lock_beats = Table(
    "lock_beats",
    postgres_only,
    Column("job", String(255), primary_key=True),  # a name: a lock may be taken before the job is recorded
    Column("last_loop", String(32), nullable=False),
    Column("next_loop", String(32), nullable=True),  # when it means to loop next (0004); none: one poll on
)

# Which database this store was made in: its cluster's system identifier and the database's name,
# written once; a store restored or copied into another server is refused there.
store_identity = Table(
    "store_identity",
    postgres_only,
    Column("one", Integer, primary_key=True),  # always 1: one row
    Column("system_identifier", String(32), nullable=False),
    Column("database", String(255), nullable=False),
    CheckConstraint("one = 1", name="one_row"),
)
