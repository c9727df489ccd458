"""A summary row per job, rebuilt from the events

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 1000


def upgrade() -> None:
    summaries = op.create_table(
        "summaries",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("cluster", sa.String(length=255), nullable=False),
        sa.Column("adapter", sa.String(length=64), nullable=False),
        sa.Column("outcome", sa.String(length=32), nullable=True),
        sa.Column("outcome_detail", sa.Text(), nullable=False),
        sa.Column("settled", sa.Boolean(create_constraint=False), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("object_id", sa.String(length=255), nullable=True),
        sa.Column("recorded_at", sa.String(length=32), nullable=False),
        sa.Column("updated_at", sa.String(length=32), nullable=False),
        sa.Column("pruned_at", sa.String(length=32), nullable=True),
        sa.Column("outstanding", sa.Integer(), nullable=False),
        sa.Column("undelivered", sa.Integer(), nullable=False),
        sa.Column("problem", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_summaries_job_id_jobs")),
        sa.PrimaryKeyConstraint("job_id", name=op.f("pk_summaries")),
    )
    op.create_index(op.f("ix_summaries_settled"), "summaries", ["settled"], unique=False)
    op.create_index(op.f("ix_summaries_pruned_at"), "summaries", ["pruned_at"], unique=False)
    _rebuild(summaries)


def _rebuild(summaries: sa.Table) -> None:
    """Every existing record's summary, folded from its events (the record is the truth)."""
    from dunscaith.adapters.store.summary_rows import COLUMNS, grouped, rebuilt_rows

    conn = op.get_bind()
    rows = conn.execute(sa.text(
        "SELECT j.id, j.name, e.seq, e.at, e.kind, e.data FROM jobs j JOIN events e ON e.job_id = j.id "
        "ORDER BY j.id, e.seq"))
    names = ("job_id", *COLUMNS)
    here = set(summaries.c.keys())  # this revision's columns: later ones (0005's sweep) are filled by theirs
    batch: list[dict[str, object]] = []
    for row in rebuilt_rows(grouped(rows)):
        batch.append({name: value for name, value in zip(names, row, strict=True) if name in here})
        if len(batch) >= _BATCH:
            op.bulk_insert(summaries, batch)
            batch = []
    if batch:
        op.bulk_insert(summaries, batch)


def downgrade() -> None:
    op.drop_index(op.f("ix_summaries_pruned_at"), table_name="summaries")
    op.drop_index(op.f("ix_summaries_settled"), table_name="summaries")
    op.drop_table("summaries")
