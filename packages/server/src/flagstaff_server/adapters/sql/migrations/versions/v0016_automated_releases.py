"""Progressive and guarded rollouts (issue 17): one table of keyed documents, like metrics and
experiments. Additive: no existing table changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision: str | None = "0015"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "automated_releases",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
    )
    op.create_index(
        "ix_automated_releases_key",
        "automated_releases",
        ["project", "environment", "key"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_table("automated_releases")
