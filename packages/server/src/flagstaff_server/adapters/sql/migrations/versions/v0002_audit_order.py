"""Audit entries remember their append order (`pos`), so entries written in the same
millisecond, often by one transaction, list newest first."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("audit", sa.Column("pos", sa.BigInteger, nullable=False, server_default="0"))
    op.create_index("ix_audit_pos", "audit", ["pos"])


def downgrade() -> None:
    op.drop_index("ix_audit_pos", "audit")
    op.drop_column("audit", "pos")
