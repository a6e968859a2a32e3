"""Approval requests of flags and segments (`approval_requests`). Additive: no existing table
changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "approval_requests",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("resource_key", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
    )
    op.create_index(
        "ix_approval_requests_resource", "approval_requests", ["project", "kind", "resource_key"]
    )


def downgrade() -> None:
    op.drop_table("approval_requests")
