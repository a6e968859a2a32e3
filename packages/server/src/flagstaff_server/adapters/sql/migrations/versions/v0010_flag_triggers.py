"""Flag triggers (`flag_triggers`): URLs that turn a flag on or off. Additive: no existing table
changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "flag_triggers",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("flag", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("secret_hash", sa.Text, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
    )
    op.create_index("ix_flag_triggers_flag", "flag_triggers", ["project", "flag", "environment"])


def downgrade() -> None:
    op.drop_table("flag_triggers")
