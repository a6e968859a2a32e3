"""Webhooks and chat integrations (`webhooks`), their outbox (`webhook_deliveries`), the attempts
log (`webhook_attempts`) and each receiver's circuit (`webhook_health`). Additive: no existing
table changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

SERIAL = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("integration", sa.Text, nullable=True),
        sa.Column("project", sa.Text, nullable=True),
        sa.Column("on", sa.Boolean, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
        sa.ForeignKeyConstraint(
            ["project"], ["projects.key"], ondelete="CASCADE", name="fk_webhooks_project"
        ),
    )
    op.create_index("ix_webhooks_project", "webhooks", ["project"])
    op.create_table(
        "webhook_health",
        sa.Column("webhook", sa.Text, primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("open_until_ms", sa.BigInteger, nullable=True),
        sa.Column("success_count", sa.BigInteger, nullable=False),
        sa.Column("error_count", sa.BigInteger, nullable=False),
        sa.Column("last_success_ms", sa.BigInteger, nullable=True),
        sa.Column("last_error_ms", sa.BigInteger, nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.ForeignKeyConstraint(
            ["webhook"], ["webhooks.id"], ondelete="CASCADE", name="fk_webhook_health_webhook"
        ),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", SERIAL, primary_key=True),
        sa.Column("webhook", sa.Text, nullable=False),
        sa.Column("entry", sa.Text, nullable=False),
        sa.Column("order_key", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("next_ms", sa.BigInteger, nullable=False),
        sa.Column("finished_ms", sa.BigInteger, nullable=True),
        sa.ForeignKeyConstraint(
            ["webhook"],
            ["webhooks.id"],
            ondelete="CASCADE",
            name="fk_webhook_deliveries_webhook",
        ),
        sa.UniqueConstraint("webhook", "entry", name="uq_webhook_deliveries_entry"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_webhook_deliveries_pending", "webhook_deliveries", ["status", "webhook", "id"]
    )
    op.create_index("ix_webhook_deliveries_finished", "webhook_deliveries", ["finished_ms"])
    op.create_table(
        "webhook_attempts",
        sa.Column("id", SERIAL, primary_key=True),
        sa.Column("delivery", sa.BigInteger, nullable=False),
        sa.Column("webhook", sa.Text, nullable=False),
        sa.Column("at_ms", sa.BigInteger, nullable=False),
        sa.Column("status_code", sa.Integer, nullable=True),
        sa.Column("latency_ms", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.ForeignKeyConstraint(
            ["delivery"],
            ["webhook_deliveries.id"],
            ondelete="CASCADE",
            name="fk_webhook_attempts_delivery",
        ),
    )
    op.create_index("ix_webhook_attempts_delivery", "webhook_attempts", ["delivery"])


def downgrade() -> None:
    op.drop_table("webhook_attempts")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_health")
    op.drop_table("webhooks")
