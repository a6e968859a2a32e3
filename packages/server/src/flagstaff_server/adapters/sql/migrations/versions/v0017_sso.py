"""Single sign-on with OpenID Connect (issue 19): one table of keyed documents holding the
settings and the sign-ins under way. Additive: no existing table changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision: str | None = "0016"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "sso",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
    )
    op.create_index("ix_sso_key", "sso", ["project", "environment", "key"], unique=True)


def downgrade() -> None:
    op.drop_table("sso")
