"""The rows SQLite keeps. They stay in this adapter; the store maps them to domain values."""

from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, MetaData, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Named constraints from the first revision: batch migrations can only drop or alter what has a name.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class JobRow(Base):
    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)  # creation order
    name: Mapped[str] = mapped_column(String(255), unique=True)
    created_at: Mapped[str] = mapped_column(String(32))


class EventRow(Base):
    """One event line, keyed (job, seq): append-only (triggers in the schema refuse UPDATE and DELETE).

    WITHOUT ROWID: the key is the table, so an append writes one b-tree page, not a table page and an
    index page; with 1 KiB pages (engine.py) each commit's WAL frame is small and its fsync short.
    """

    __tablename__ = "events"
    __table_args__ = ({"sqlite_with_rowid": False},)

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[str] = mapped_column(String(32))  # ISO 8601, UTC, fixed width
    kind: Mapped[str] = mapped_column(String(64))
    data: Mapped[str] = mapped_column(Text)  # canonical JSON object
