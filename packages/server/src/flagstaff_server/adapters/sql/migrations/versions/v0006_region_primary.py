"""The record of which region holds the primary database (docs/operations/regions.md): one row
that standbys read through replication. Additive: no existing table changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "region_primary",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("region", sa.Text, nullable=False),
        sa.Column("timeline", sa.Integer, nullable=True),
        sa.Column("at_ms", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("region_primary")
