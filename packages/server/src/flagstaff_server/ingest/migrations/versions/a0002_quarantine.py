"""The quarantine: payloads that failed processing on their own, kept with the error until an
operator reprocesses them (`ingest/quarantine.py`). A database adopted by the first revision
may already have the table (made directly from the store's tables): it is kept."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "a0002"
down_revision: str | None = "a0001"
branch_labels: str | None = None
depends_on: str | None = None

ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")
"""Auto-increment ids: SQLite only auto-increments an INTEGER primary key."""


def upgrade() -> None:
    if "ingest_quarantine" in sa.inspect(op.get_bind()).get_table_names():
        return
    op.create_table(
        "ingest_quarantine",
        sa.Column("id", ID, primary_key=True, autoincrement=True),
        sa.Column("project", sa.String(255), nullable=False),
        sa.Column("environment", sa.String(255), nullable=False),
        sa.Column("payload_id", sa.String(255), nullable=False),
        sa.Column("kind", sa.Integer, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("received_ms", sa.BigInteger, nullable=False),
        sa.Column("quarantined_ms", sa.BigInteger, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
    )
    op.create_index(
        "ingest_quarantine_by_payload",
        "ingest_quarantine",
        ["project", "environment", "payload_id"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_table("ingest_quarantine")
