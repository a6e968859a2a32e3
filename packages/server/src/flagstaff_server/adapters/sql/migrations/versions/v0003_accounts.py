"""Local accounts for the web UI (scrypt password hashes) and browser sessions (hashed ids).
Additive: no existing table changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("email", sa.Text, nullable=False),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("password_hash", sa.Text, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
        sa.UniqueConstraint("email", name="uq_accounts_email"),
    )
    op.create_table(
        "sessions",
        sa.Column("id_hash", sa.Text, primary_key=True),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("csrf_token", sa.Text, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("expires_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_sessions_subject", "sessions", ["subject"])
    op.create_index("ix_sessions_expires", "sessions", ["expires_ms"])


def downgrade() -> None:
    op.drop_table("sessions")
    op.drop_table("accounts")
