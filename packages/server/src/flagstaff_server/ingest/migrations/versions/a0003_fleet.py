"""The fleet view's columns of `ingest_sdk_instances`: each instance's diagnostic interval (when
it counts as stopped), the first failed stream attempt after its last success (how old its data
is), Flagstaff's own SDK's reported data-source state, and when it said it was closing. A table
made directly from the store's tables (adopted by the first revision) may have them already."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "a0003"
down_revision: str | None = "a0002"
branch_labels: str | None = None
depends_on: str | None = None

COLUMNS = (
    ("diagnostic_interval_ms", sa.BigInteger),
    ("stream_failed_ms", sa.BigInteger),
    ("reported_state", lambda: sa.String(32)),
    ("reported_since_ms", sa.BigInteger),
    ("reported_age_ms", sa.BigInteger),
    ("reported_source", lambda: sa.String(32)),
    ("reported_ms", sa.BigInteger),
    ("stopped_ms", sa.BigInteger),
)


def upgrade() -> None:
    found = sa.inspect(op.get_bind()).get_columns("ingest_sdk_instances")
    existing = {column["name"] for column in found}
    for name, kind in COLUMNS:
        if name not in existing:
            op.add_column("ingest_sdk_instances", sa.Column(name, kind(), nullable=True))


def downgrade() -> None:
    for name, _ in reversed(COLUMNS):
        op.drop_column("ingest_sdk_instances", name)
