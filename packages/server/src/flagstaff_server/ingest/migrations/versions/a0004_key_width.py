"""Key columns as wide as the keys the management API accepts (256 characters, not 255): a
project, environment, flag or custom event key of 256 characters failed every batch holding it
on PostgreSQL. Widening a `varchar` there changes only the catalog. SQLite does not enforce a
`VARCHAR` length, so its tables stay as they are."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "a0004"
down_revision: str | None = "a0003"
branch_labels: str | None = None
depends_on: str | None = None

KEY_COLUMNS = {
    "ingest_payloads": ("project", "environment"),
    "ingest_evaluations": ("project", "environment", "flag_key"),
    "ingest_flag_activity": ("project", "environment", "flag_key"),
    "ingest_custom_events": ("project", "environment", "key"),
    "ingest_raw_payloads": ("project", "environment"),
    "ingest_contexts": ("project", "environment"),
    "ingest_sdk_instances": ("project", "environment"),
    "ingest_quarantine": ("project", "environment"),
}


def _alter(width: int) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, columns in KEY_COLUMNS.items():
        for column in columns:
            op.alter_column(table, column, type_=sa.String(width), existing_nullable=False)


def upgrade() -> None:
    _alter(256)


def downgrade() -> None:
    _alter(255)
