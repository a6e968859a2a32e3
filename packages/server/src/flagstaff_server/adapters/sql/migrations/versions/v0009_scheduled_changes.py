"""Scheduled changes of flags (`scheduled_changes`), applied by the worker role. Additive: no
existing table changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "scheduled_changes",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("flag", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("execution_ms", sa.BigInteger, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
    )
    op.create_index("ix_scheduled_changes_due", "scheduled_changes", ["status", "execution_ms"])
    op.create_index("ix_scheduled_changes_flag", "scheduled_changes", ["project", "flag"])


def downgrade() -> None:
    op.drop_table("scheduled_changes")
