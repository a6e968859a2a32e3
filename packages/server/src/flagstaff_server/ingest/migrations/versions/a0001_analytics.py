"""The first analytics schema: processed payload ids and journal positions, hourly evaluation
counts, flag activity, custom events, raw payloads, contexts seen and SDK instances. Databases
made before this chain existed (tables created directly) are adopted: a table already there is
kept as it is."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "a0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")
"""Auto-increment ids: SQLite only auto-increments an INTEGER primary key."""


def upgrade() -> None:
    existing = set(sa.inspect(op.get_bind()).get_table_names())
    tables: list[tuple[str, list[sa.Column[Any]], list[tuple[str, list[str]]]]] = [
        (
            "ingest_positions",
            [
                sa.Column("node", sa.String(64), primary_key=True),
                sa.Column("seq", sa.BigInteger, nullable=False),
            ],
            [],
        ),
        (
            "ingest_payloads",
            [
                sa.Column("project", sa.String(255), primary_key=True),
                sa.Column("environment", sa.String(255), primary_key=True),
                sa.Column("payload_id", sa.String(255), primary_key=True),
                sa.Column("processed_ms", sa.BigInteger, nullable=False),
            ],
            [("ix_ingest_payloads_processed_ms", ["processed_ms"])],
        ),
        (
            "ingest_evaluations",
            [
                sa.Column("project", sa.String(255), primary_key=True),
                sa.Column("environment", sa.String(255), primary_key=True),
                sa.Column("flag_key", sa.String(255), primary_key=True),
                sa.Column("hour_ms", sa.BigInteger, primary_key=True),
                sa.Column("variation", sa.Integer, primary_key=True),
                sa.Column("count", sa.BigInteger, nullable=False),
            ],
            [],
        ),
        (
            "ingest_flag_activity",
            [
                sa.Column("project", sa.String(255), primary_key=True),
                sa.Column("environment", sa.String(255), primary_key=True),
                sa.Column("flag_key", sa.String(255), primary_key=True),
                sa.Column("first_ms", sa.BigInteger, nullable=False),
                sa.Column("last_ms", sa.BigInteger, nullable=False),
            ],
            [],
        ),
        (
            "ingest_custom_events",
            [
                sa.Column("id", ID, primary_key=True, autoincrement=True),
                sa.Column("project", sa.String(255), nullable=False),
                sa.Column("environment", sa.String(255), nullable=False),
                sa.Column("created_ms", sa.BigInteger, nullable=False),
                sa.Column("key", sa.String(255), nullable=False),
                sa.Column("context_key", sa.String(1024), nullable=False),
                sa.Column("metric_value", sa.Float, nullable=True),
            ],
            [
                (
                    "ingest_custom_events_by_key",
                    ["project", "environment", "key", "created_ms"],
                )
            ],
        ),
        (
            "ingest_raw_payloads",
            [
                sa.Column("id", ID, primary_key=True, autoincrement=True),
                sa.Column("project", sa.String(255), nullable=False),
                sa.Column("environment", sa.String(255), nullable=False),
                sa.Column("first_ms", sa.BigInteger, nullable=False),
                sa.Column("last_ms", sa.BigInteger, nullable=False),
                sa.Column("body", sa.LargeBinary, nullable=False),
            ],
            [("ingest_raw_payloads_by_time", ["project", "environment", "last_ms"])],
        ),
        (
            "ingest_contexts",
            [
                sa.Column("project", sa.String(255), primary_key=True),
                sa.Column("environment", sa.String(255), primary_key=True),
                sa.Column("kind", sa.String(255), primary_key=True),
                sa.Column("key", sa.String(1024), primary_key=True),
                sa.Column("last_ms", sa.BigInteger, nullable=False),
                sa.Column("context", sa.Text, nullable=False),
            ],
            [("ingest_contexts_by_time", ["project", "environment", "last_ms"])],
        ),
        (
            "ingest_sdk_instances",
            [
                sa.Column("project", sa.String(255), primary_key=True),
                sa.Column("environment", sa.String(255), primary_key=True),
                sa.Column("instance_id", sa.String(255), primary_key=True),
                sa.Column("sdk_name", sa.String(255), nullable=True),
                sa.Column("sdk_version", sa.String(255), nullable=True),
                sa.Column("wrapper", sa.String(255), nullable=True),
                sa.Column("streaming", sa.Boolean, nullable=True),
                sa.Column("platform", sa.Text, nullable=True),
                sa.Column("first_ms", sa.BigInteger, nullable=False),
                sa.Column("last_ms", sa.BigInteger, nullable=False),
                sa.Column("dropped_events", sa.BigInteger, nullable=False),
                sa.Column("data_since_ms", sa.BigInteger, nullable=True),
                sa.Column("stream_init_ms", sa.BigInteger, nullable=True),
                sa.Column("stream_ok", sa.Boolean, nullable=True),
                sa.Column("stream_ok_ms", sa.BigInteger, nullable=True),
            ],
            [],
        ),
    ]
    for name, columns, indexes in tables:
        if name in existing:
            continue
        op.create_table(name, *columns)
        for index, index_columns in indexes:
            op.create_index(index, name, index_columns)


def downgrade() -> None:
    for name in (
        "ingest_sdk_instances",
        "ingest_contexts",
        "ingest_raw_payloads",
        "ingest_custom_events",
        "ingest_flag_activity",
        "ingest_evaluations",
        "ingest_payloads",
        "ingest_positions",
    ):
        op.drop_table(name)
