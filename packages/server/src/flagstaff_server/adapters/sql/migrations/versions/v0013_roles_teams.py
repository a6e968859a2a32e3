"""Custom roles and teams (issue 19): two tables of keyed documents, account-wide (project and
environment ""). Additive: no existing table changes; members stay in `accounts`."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    for table in ("custom_roles", "teams"):
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
    op.drop_table("teams")
    op.drop_table("custom_roles")
