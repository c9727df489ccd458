"""Which sweep a job is an element of, and its index, in its summary

``status NAME`` and ``list`` ask for one sweep's elements: two columns of the summary, the sweep indexed,
so that question is one indexed query, never a fold of every record. A job of its own has NULL in both.
No build before this one recorded a sweep, so on every store so far both stay NULL; still, each record
whose first event names a sweep gets its two values folded from its events, as revision 0002 folded the
summaries: the summary is the record's fold, whatever build wrote the record.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("summaries") as batch:
        batch.add_column(sa.Column("sweep", sa.String(length=255), nullable=True))
        batch.add_column(sa.Column("sweep_index", sa.Integer(), nullable=True))
        batch.create_index(op.f("ix_summaries_sweep"), ["sweep"], unique=False)
    _fill()


def _fill() -> None:
    """The two values of every record whose first event names a sweep, folded from its events (the record is
    the truth; a record that does not read keeps NULL, as its summary says)."""
    from dunscaith.adapters.store.summary_rows import COLUMNS, grouped, rebuilt_rows

    conn = op.get_bind()
    rows = conn.execute(sa.text(
        "SELECT j.id, j.name, e.seq, e.at, e.kind, e.data FROM jobs j JOIN events e ON e.job_id = j.id "
        "WHERE j.id IN (SELECT job_id FROM events WHERE kind = 'job-recorded' AND data LIKE :named) "
        "ORDER BY j.id, e.seq"), {"named": '%"sweep":%'})
    sweep, index = COLUMNS.index("sweep") + 1, COLUMNS.index("sweep_index") + 1  # after job_id
    update = sa.text("UPDATE summaries SET sweep = :sweep, sweep_index = :sweep_index WHERE job_id = :job_id")
    for row in rebuilt_rows(grouped(rows)):
        if row[sweep] is not None:
            conn.execute(update, {"sweep": row[sweep], "sweep_index": row[index], "job_id": row[0]})


def downgrade() -> None:
    with op.batch_alter_table("summaries") as batch:
        batch.drop_index(op.f("ix_summaries_sweep"))
        batch.drop_column("sweep_index")
        batch.drop_column("sweep")
