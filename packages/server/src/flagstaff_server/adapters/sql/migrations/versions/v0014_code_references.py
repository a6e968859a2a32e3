"""Code references (issue 21): repositories, their branches' references and extinctions, each a
keyed document (the shape of `metrics`). Additive: no existing table changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None

TABLES = ("code_ref_repositories", "code_ref_branches", "code_ref_extinctions")


def upgrade() -> None:
    for table in TABLES:
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
    for table in reversed(TABLES):
        op.drop_table(table)
