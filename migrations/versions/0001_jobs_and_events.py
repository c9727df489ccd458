"""Jobs and their append-only event lines

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.UniqueConstraint("name", name=op.f("uq_jobs_name")),
    )
    op.create_table(
        "events",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("at", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_events_job_id_jobs")),
        sa.PrimaryKeyConstraint("job_id", "seq", name=op.f("pk_events")),  # one line per (job, seq)
        sqlite_with_rowid=False,
    )
    # A record is never edited: refuse it in the database too, not only in the code.
    if op.get_context().dialect.name == "postgresql":
        _postgres_only()
        return
    op.execute(
        "CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events "
        "BEGIN SELECT RAISE(ABORT, 'events are append-only'); END"
    )
    op.execute(
        "CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events "
        "BEGIN SELECT RAISE(ABORT, 'events are append-only'); END"
    )


def _postgres_only() -> None:
    """PostgreSQL's triggers call a function; and its store keeps the loop's beat and its own identity."""
    op.execute(
        "CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'events are append-only'; END $$"
    )
    op.execute(
        "CREATE TRIGGER events_append_only_update BEFORE UPDATE OR DELETE ON events "
        "FOR EACH ROW EXECUTE FUNCTION events_append_only()"
    )
    op.execute(
        "CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events "
        "FOR EACH STATEMENT EXECUTE FUNCTION events_append_only()"
    )
    op.create_table(
        "lock_beats",
        sa.Column("job", sa.String(length=255), nullable=False),
        sa.Column("last_loop", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("job", name=op.f("pk_lock_beats")),
    )
    op.create_table(
        "store_identity",
        sa.Column("one", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("system_identifier", sa.String(length=32), nullable=False),
        sa.Column("database", sa.String(length=255), nullable=False),
        sa.CheckConstraint("one = 1", name=op.f("ck_store_identity_one_row")),
        sa.PrimaryKeyConstraint("one", name=op.f("pk_store_identity")),
    )


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.drop_table("store_identity")
        op.drop_table("lock_beats")
        op.execute("DROP TRIGGER events_append_only_truncate ON events")
        op.execute("DROP TRIGGER events_append_only_update ON events")
        op.drop_table("events")
        op.drop_table("jobs")
        op.execute("DROP FUNCTION events_append_only()")
        return
    op.execute("DROP TRIGGER events_append_only_delete")
    op.execute("DROP TRIGGER events_append_only_update")
    op.drop_table("events")
    op.drop_table("jobs")
