"""The analytics store's tables (SQLAlchemy Core): journal positions, processed payload ids,
hourly evaluation counts, flag activity, custom events, raw payloads, contexts, SDK instances and
the quarantine. They must match the newest revision of `ingest.migration`'s chain (a test
compares them); text columns are as wide as `payload_values` lets texts be. Definitions only.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

from flagstaff_server.ingest.payload_values import CONTEXT_KEY_CHARS, KEY_CHARS, NAME_CHARS

metadata = MetaData()

positions = Table(
    "ingest_positions",
    metadata,
    Column("node", String(64), primary_key=True),
    Column("seq", BigInteger, nullable=False),
)
payloads = Table(
    "ingest_payloads",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("payload_id", String(255), primary_key=True),
    Column("processed_ms", BigInteger, nullable=False, index=True),
)
evaluations = Table(
    "ingest_evaluations",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("flag_key", String(KEY_CHARS), primary_key=True),
    Column("hour_ms", BigInteger, primary_key=True),
    Column("variation", Integer, primary_key=True),
    Column("count", BigInteger, nullable=False),
)
activity = Table(
    "ingest_flag_activity",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("flag_key", String(KEY_CHARS), primary_key=True),
    Column("first_ms", BigInteger, nullable=False),
    Column("last_ms", BigInteger, nullable=False),
)
customs = Table(
    "ingest_custom_events",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("project", String(KEY_CHARS), nullable=False),
    Column("environment", String(KEY_CHARS), nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("key", String(KEY_CHARS), nullable=False),
    Column("context_key", String(CONTEXT_KEY_CHARS), nullable=False),
    Column("metric_value", Float, nullable=True),
    Index("ingest_custom_events_by_key", "project", "environment", "key", "created_ms"),
)
raw = Table(
    "ingest_raw_payloads",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("project", String(KEY_CHARS), nullable=False),
    Column("environment", String(KEY_CHARS), nullable=False),
    Column("first_ms", BigInteger, nullable=False),
    Column("last_ms", BigInteger, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Index("ingest_raw_payloads_by_time", "project", "environment", "last_ms"),
)
contexts = Table(
    "ingest_contexts",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("kind", String(NAME_CHARS), primary_key=True),
    Column("key", String(CONTEXT_KEY_CHARS), primary_key=True),
    Column("last_ms", BigInteger, nullable=False),
    Column("context", Text, nullable=False),
    Index("ingest_contexts_by_time", "project", "environment", "last_ms"),
)
instances = Table(
    "ingest_sdk_instances",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("instance_id", String(NAME_CHARS), primary_key=True),
    Column("sdk_name", String(NAME_CHARS), nullable=True),
    Column("sdk_version", String(NAME_CHARS), nullable=True),
    Column("wrapper", String(NAME_CHARS), nullable=True),
    Column("streaming", Boolean, nullable=True),
    Column("platform", Text, nullable=True),
    Column("first_ms", BigInteger, nullable=False),
    Column("last_ms", BigInteger, nullable=False),
    Column("dropped_events", BigInteger, nullable=False),
    Column("data_since_ms", BigInteger, nullable=True),
    Column("stream_init_ms", BigInteger, nullable=True),
    Column("stream_ok", Boolean, nullable=True),
    Column("stream_ok_ms", BigInteger, nullable=True),
    Column("diagnostic_interval_ms", BigInteger, nullable=True),
    Column("stream_failed_ms", BigInteger, nullable=True),
    Column("reported_state", String(32), nullable=True),
    Column("reported_since_ms", BigInteger, nullable=True),
    Column("reported_age_ms", BigInteger, nullable=True),
    Column("reported_source", String(32), nullable=True),
    Column("reported_ms", BigInteger, nullable=True),
    Column("stopped_ms", BigInteger, nullable=True),
)
quarantined = Table(
    "ingest_quarantine",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("project", String(KEY_CHARS), nullable=False),
    Column("environment", String(KEY_CHARS), nullable=False),
    Column("payload_id", String(255), nullable=False),
    Column("kind", Integer, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("received_ms", BigInteger, nullable=False),
    Column("quarantined_ms", BigInteger, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("error", Text, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Index("ingest_quarantine_by_payload", "project", "environment", "payload_id", unique=True),
)
exposures = Table(
    "experiment_exposures",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("flag_key", String(KEY_CHARS), primary_key=True),
    Column("flag_version", BigInteger, primary_key=True),
    Column("context_kind", String(NAME_CHARS), primary_key=True),
    Column("context_key", String(CONTEXT_KEY_CHARS), primary_key=True),
    Column("first_ms", BigInteger, nullable=False),
    Column("variation", Integer, nullable=False),
)
