"""Database epochs (docs/storage.md, "Epochs"): the `epochs` table with epoch 1 (on PostgreSQL
with the timeline and system identifier it began on), the epoch of every change record, and the
current epoch beside the change counter. Existing changes and the counter belong to epoch 1."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from flagstaff_server.adapters.sql.timeline import read_timeline

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("changes", sa.Column("epoch", sa.Integer, nullable=False, server_default="1"))
    op.add_column(
        "change_counter", sa.Column("epoch", sa.Integer, nullable=False, server_default="1")
    )
    epochs = op.create_table(
        "epochs",
        sa.Column("epoch", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("started_after_seq", sa.BigInteger, nullable=False),
        sa.Column("timeline", sa.BigInteger, nullable=True),
        sa.Column("system_id", sa.Text, nullable=True),
        sa.Column("at_ms", sa.BigInteger, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
    )
    # Migrations run on a primary (never on a standby), so this is the history epoch 1 is on.
    # Its start time is the Unix epoch: the same on every database, as the memory store has it.
    identity = read_timeline(op.get_bind())
    op.bulk_insert(
        epochs,
        [
            {
                "epoch": 1,
                "started_after_seq": 0,
                "timeline": None if identity is None else identity.timeline,
                "system_id": None if identity is None else identity.system_id,
                "at_ms": 0,
                "reason": "initial",
            }
        ],
    )


def downgrade() -> None:
    op.drop_table("epochs")
    with op.batch_alter_table("change_counter") as batch:
        batch.drop_column("epoch")
    with op.batch_alter_table("changes") as batch:
        batch.drop_column("epoch")
