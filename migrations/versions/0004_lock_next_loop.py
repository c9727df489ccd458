"""When a PostgreSQL lock holder means to loop next (display only)

A supervisor woken by the server (LISTEN/NOTIFY) sleeps to its job's next poll, up to minutes away; with
only its last loop kept, every reader would call it late after three poll intervals. SQLite keeps both
times in the lock file already: nothing changes there.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.add_column("lock_beats", sa.Column("next_loop", sa.String(length=32), nullable=True))


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.drop_column("lock_beats", "next_loop")
