"""Metrics and experiments (issue 17): two tables of keyed documents. Additive: no existing table
changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    for table in ("metrics", "experiments"):
        op.create_table(
            table,
            sa.Column("id", sa.Text, primary_key=True),
            sa.Column("project", sa.Text, nullable=False),
            sa.Column("environment", sa.Text, nullable=False),
            sa.Column("key", sa.Text, nullable=False),
            sa.Column("version", sa.Integer, nullable=False),
            sa.Column("created_ms", sa.BigInteger, nullable=False),
            sa.Column("doc", sa.Text, nullable=False),
        )
        op.create_index(f"ix_{table}_key", table, ["project", "environment", "key"], unique=True)


def downgrade() -> None:
    op.drop_table("experiments")
    op.drop_table("metrics")
