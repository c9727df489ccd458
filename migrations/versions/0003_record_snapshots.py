"""A folded snapshot per long record, made from the events

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 200


def upgrade() -> None:
    snapshots = op.create_table(
        "snapshots",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_snapshots_job_id_jobs")),
        sa.PrimaryKeyConstraint("job_id", name=op.f("pk_snapshots")),
    )
    _rebuild(snapshots)


def _rebuild(snapshots: sa.Table) -> None:
    """The newest snapshot of every existing record long enough to have one, folded from its events (the
    others have none to make: only their length is read)."""
    from dunscaith.adapters.store.summary_rows import grouped, rebuilt
    from dunscaith.domain.model.jobs.snapshot import EVERY

    conn = op.get_bind()
    rows = conn.execute(sa.text(
        "SELECT j.id, j.name, e.seq, e.at, e.kind, e.data FROM jobs j JOIN events e ON e.job_id = j.id "
        "WHERE j.id IN (SELECT job_id FROM events GROUP BY job_id HAVING max(seq) >= :every) "
        "ORDER BY j.id, e.seq"), {"every": EVERY})
    batch: list[dict[str, object]] = []
    for _, made in rebuilt(grouped(rows)):
        if made is None:
            continue
        job_id, seq, data = made
        batch.append({"job_id": job_id, "seq": seq, "data": data})
        if len(batch) >= _BATCH:
            op.bulk_insert(snapshots, batch)
            batch = []
    if batch:
        op.bulk_insert(snapshots, batch)


def downgrade() -> None:
    op.drop_table("snapshots")
