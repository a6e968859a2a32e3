"""Experiment exposures (issue 17): each unit's first exposure to an experiment's flag version,
and the variation it was served, kept as feature events with `inExperiment` are processed.
Additive."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "a0005"
down_revision: str | None = "a0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("experiment_exposures"):
        return  # a database made before the chain (a0001 adopts it) has every table already
    op.create_table(
        "experiment_exposures",
        sa.Column("project", sa.String(256), primary_key=True),
        sa.Column("environment", sa.String(256), primary_key=True),
        sa.Column("flag_key", sa.String(256), primary_key=True),
        sa.Column("flag_version", sa.BigInteger, primary_key=True),
        sa.Column("context_kind", sa.String(255), primary_key=True),
        sa.Column("context_key", sa.String(1024), primary_key=True),
        sa.Column("first_ms", sa.BigInteger, nullable=False),
        sa.Column("variation", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("experiment_exposures")
