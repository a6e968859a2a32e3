"""Operator notices posted through the management API (`/api/v2/status/notices`), which delivery
nodes show on their status page. Additive: no existing table changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "status_notices",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("expires_ms", sa.BigInteger, nullable=True),
        sa.Column("doc", sa.Text, nullable=False),
    )
    op.create_index("ix_status_notices_created", "status_notices", ["created_ms"])


def downgrade() -> None:
    op.drop_table("status_notices")
