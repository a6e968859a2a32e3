"""Worker job leases (`worker_leases`): which `flagstaff serve --role worker` process runs each
job. Additive: no existing table changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "worker_leases",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("holder", sa.Text, nullable=False),
        sa.Column("expires_ms", sa.BigInteger, nullable=False),
        sa.Column("fence", sa.BigInteger, nullable=False),
        sa.Column("acquired_ms", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("worker_leases")
