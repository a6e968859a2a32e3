"""The tables the SQL store queries. The migrations create them; a contract test checks that the
migrated database matches this metadata. JSON is kept as text, times as UTC epoch milliseconds."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

projects = Table(
    "projects",
    metadata,
    Column("key", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("tags", Text, nullable=False),
    Column("doc", Text, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
)

environments = Table(
    "environments",
    metadata,
    Column("project", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("sdk_key", Text, nullable=False),
    Column("mobile_key", Text, nullable=False),
    Column("client_side_id", Text, nullable=False),
    Column("secure_mode", Boolean, nullable=False),
    Column("doc", Text, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("project", "key", name="pk_environments"),
    ForeignKeyConstraint(
        ["project"], ["projects.key"], ondelete="CASCADE", name="fk_environments_project"
    ),
    UniqueConstraint("sdk_key", name="uq_environments_sdk_key"),
    UniqueConstraint("mobile_key", name="uq_environments_mobile_key"),
    UniqueConstraint("client_side_id", name="uq_environments_client_side_id"),
)

retired_credentials = Table(
    "retired_credentials",
    metadata,
    Column("kind", Text, nullable=False),
    Column("value", Text, nullable=False),
    Column("project", Text, nullable=False),
    Column("environment", Text, nullable=False),
    Column("expires_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("kind", "value", name="pk_retired_credentials"),
    ForeignKeyConstraint(
        ["project", "environment"],
        ["environments.project", "environments.key"],
        ondelete="CASCADE",
        name="fk_retired_credentials_environment",
    ),
    Index("ix_retired_credentials_environment", "project", "environment"),
)

flags = Table(
    "flags",
    metadata,
    Column("project", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("doc", Text, nullable=False),
    PrimaryKeyConstraint("project", "key", name="pk_flags"),
    ForeignKeyConstraint(
        ["project"], ["projects.key"], ondelete="CASCADE", name="fk_flags_project"
    ),
)

segments = Table(
    "segments",
    metadata,
    Column("project", Text, nullable=False),
    Column("environment", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("doc", Text, nullable=False),
    PrimaryKeyConstraint("project", "environment", "key", name="pk_segments"),
    ForeignKeyConstraint(
        ["project", "environment"],
        ["environments.project", "environments.key"],
        ondelete="CASCADE",
        name="fk_segments_environment",
    ),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("role", Text, nullable=False),
    Column("secret_hash", Text, nullable=False),
    Column("project", Text, nullable=True),
    Column("environment", Text, nullable=True),
    Column("created_ms", BigInteger, nullable=False),
    Column("revoked_ms", BigInteger, nullable=True),
    Column("doc", Text, nullable=False),
    UniqueConstraint("secret_hash", name="uq_tokens_secret_hash"),
)

audit = Table(
    "audit",
    metadata,
    Column("id", Text, primary_key=True),
    Column("at_ms", BigInteger, nullable=False),
    Column("actor", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("resource", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("comment", Text, nullable=True),
    Column("patch", Text, nullable=True),
    Column("before", Text, nullable=True),
    Column("after", Text, nullable=True),
    # append order, so entries of the same millisecond list newest first (migration 0002)
    Column("pos", BigInteger, nullable=False, server_default="0"),
    Index("ix_audit_at", "at_ms"),
    Index("ix_audit_resource", "resource"),
    Index("ix_audit_pos", "pos"),
)

changes = Table(
    "changes",
    metadata,
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("project", Text, nullable=False),
    Column("environment", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("item", Text, nullable=True),
    Column("at_ms", BigInteger, nullable=False),
    # the epoch the change was committed in (migration 0004)
    Column("epoch", Integer, nullable=False, server_default="1"),
)

# One row (id = 1) holding the last seq handed out and the current epoch. Taking the next number
# updates this row, so the row lock orders writers: seq order is commit order and a rollback
# returns the number. An epoch start moves both on in one update (migration 0004).
change_counter = Table(
    "change_counter",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("seq", BigInteger, nullable=False),
    Column("epoch", Integer, nullable=False, server_default="1"),
)

# The database's epochs: each began after `started_after_seq` on a new primary or after a
# restore (migration 0004; it records epoch 1). An empty table reads as epoch 1 alone.
epochs = Table(
    "epochs",
    metadata,
    Column("epoch", Integer, primary_key=True, autoincrement=False),
    Column("started_after_seq", BigInteger, nullable=False),
    Column("timeline", BigInteger, nullable=True),
    Column("system_id", Text, nullable=True),
    Column("at_ms", BigInteger, nullable=False),
    Column("reason", Text, nullable=False),
)

# Local accounts of the web UI and their browser sessions (migration 0003).
accounts = Table(
    "accounts",
    metadata,
    Column("id", Text, primary_key=True),
    Column("email", Text, nullable=False),
    Column("role", Text, nullable=False),
    Column("password_hash", Text, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("doc", Text, nullable=False),
    UniqueConstraint("email", name="uq_accounts_email"),
)

sessions = Table(
    "sessions",
    metadata,
    Column("id_hash", Text, primary_key=True),
    Column("subject", Text, nullable=False),
    Column("csrf_token", Text, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("expires_ms", BigInteger, nullable=False),
    Index("ix_sessions_subject", "subject"),
    Index("ix_sessions_expires", "expires_ms"),
)

# Operator notices posted through the API, shown on the delivery nodes' status page
# (migration 0005).
status_notices = Table(
    "status_notices",
    metadata,
    Column("id", Text, primary_key=True),
    Column("created_ms", BigInteger, nullable=False),
    Column("expires_ms", BigInteger, nullable=True),
    Column("doc", Text, nullable=False),
    Index("ix_status_notices_created", "created_ms"),
)

# Which region holds the primary (migration 0006): one row (id = 1), written on the primary by
# its region's API and by `flagstaff dr promote`, read in every region through replication.
region_primary = Table(
    "region_primary",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("region", Text, nullable=False),
    Column("timeline", Integer, nullable=True),
    Column("at_ms", BigInteger, nullable=False),
)

# Worker job leases: which worker process runs a job now, until when, and the fencing token that
# grows each time the lease changes hands (migration 0007; docs/workflows.md, "The worker").
worker_leases = Table(
    "worker_leases",
    metadata,
    Column("name", Text, primary_key=True),
    Column("holder", Text, nullable=False),
    Column("expires_ms", BigInteger, nullable=False),
    Column("fence", BigInteger, nullable=False),
    Column("acquired_ms", BigInteger, nullable=False),
)

# Webhooks and chat integrations, their outbox of deliveries, each delivery's attempts and each
# receiver's health (migration 0008; docs/workflows.md, "Webhooks"). A project's integrations go
# with it; a receiver's deliveries, attempts and health go with the receiver.
webhooks = Table(
    "webhooks",
    metadata,
    Column("id", Text, primary_key=True),
    Column("integration", Text, nullable=True),
    Column("project", Text, nullable=True),
    Column("on", Boolean, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("doc", Text, nullable=False),
    ForeignKeyConstraint(
        ["project"], ["projects.key"], ondelete="CASCADE", name="fk_webhooks_project"
    ),
    Index("ix_webhooks_project", "project"),
)

webhook_health = Table(
    "webhook_health",
    metadata,
    Column("webhook", Text, primary_key=True),
    Column("failures", Integer, nullable=False),
    Column("open_until_ms", BigInteger, nullable=True),
    Column("success_count", BigInteger, nullable=False),
    Column("error_count", BigInteger, nullable=False),
    Column("last_success_ms", BigInteger, nullable=True),
    Column("last_error_ms", BigInteger, nullable=True),
    Column("last_error", Text, nullable=True),
    ForeignKeyConstraint(
        ["webhook"], ["webhooks.id"], ondelete="CASCADE", name="fk_webhook_health_webhook"
    ),
)

# `id` is the outbox order (SQLite: AUTOINCREMENT, so an id is never handed out twice).
webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("webhook", Text, nullable=False),
    Column("entry", Text, nullable=False),
    Column("order_key", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("next_ms", BigInteger, nullable=False),
    Column("finished_ms", BigInteger, nullable=True),
    ForeignKeyConstraint(
        ["webhook"], ["webhooks.id"], ondelete="CASCADE", name="fk_webhook_deliveries_webhook"
    ),
    UniqueConstraint("webhook", "entry", name="uq_webhook_deliveries_entry"),
    Index("ix_webhook_deliveries_pending", "status", "webhook", "id"),
    Index("ix_webhook_deliveries_finished", "finished_ms"),
    sqlite_autoincrement=True,
)

webhook_attempts = Table(
    "webhook_attempts",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("delivery", BigInteger, nullable=False),
    Column("webhook", Text, nullable=False),
    Column("at_ms", BigInteger, nullable=False),
    Column("status_code", Integer, nullable=True),
    Column("latency_ms", Integer, nullable=False),
    Column("error", Text, nullable=True),
    ForeignKeyConstraint(
        ["delivery"],
        ["webhook_deliveries.id"],
        ondelete="CASCADE",
        name="fk_webhook_attempts_delivery",
    ),
    Index("ix_webhook_attempts_delivery", "delivery"),
)

# Scheduled changes of flags (migration 0009; docs/workflows.md, "Scheduled changes"): pending
# until the worker applies them once; the due ones are found by (status, execution_ms).
scheduled_changes = Table(
    "scheduled_changes",
    metadata,
    Column("id", Text, primary_key=True),
    Column("project", Text, nullable=False),
    Column("flag", Text, nullable=False),
    Column("environment", Text, nullable=False),
    Column("execution_ms", BigInteger, nullable=False),
    Column("status", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("doc", Text, nullable=False),
    Index("ix_scheduled_changes_due", "status", "execution_ms"),
    Index("ix_scheduled_changes_flag", "project", "flag"),
)

# Flag triggers (migration 0010; docs/workflows.md, "Flag triggers"): the URL's secret is kept
# as its SHA-256 only.
flag_triggers = Table(
    "flag_triggers",
    metadata,
    Column("id", Text, primary_key=True),
    Column("project", Text, nullable=False),
    Column("flag", Text, nullable=False),
    Column("environment", Text, nullable=False),
    Column("secret_hash", Text, nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("doc", Text, nullable=False),
    Index("ix_flag_triggers_flag", "project", "flag", "environment"),
)

# Approval requests of flags and segments (migration 0011; docs/workflows.md, "Approval
# requests"): one row per request, its reviews and instructions in `doc`.
approval_requests = Table(
    "approval_requests",
    metadata,
    Column("id", Text, primary_key=True),
    Column("project", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("resource_key", Text, nullable=False),
    Column("environment", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("doc", Text, nullable=False),
    Index("ix_approval_requests_resource", "project", "kind", "resource_key"),
)


def _keyed(name: str) -> Table:
    """A keyed document table: one JSON document per (project, environment, key), versioned."""
    return Table(
        name,
        metadata,
        Column("id", Text, primary_key=True),
        Column("project", Text, nullable=False),
        Column("environment", Text, nullable=False),
        Column("key", Text, nullable=False),
        Column("version", Integer, nullable=False),
        Column("created_ms", BigInteger, nullable=False),
        Column("doc", Text, nullable=False),
        Index(f"ix_{name}_key", "project", "environment", "key", unique=True),
    )


# Experimentation (issue 17): metrics per project (environment ""), experiments per environment.
metrics = _keyed("metrics")
experiments = _keyed("experiments")

# Identity (issue 19): custom roles and teams, account-wide keyed documents (project and
# environment "").
custom_roles = _keyed("custom_roles")
teams = _keyed("teams")


# Code references (issue 21), keyed documents whose two scope columns hold, for a repository,
# ("", ""); for a branch, (repository, ""); for an extinction, (repository, branch).
code_ref_repositories = _keyed("code_ref_repositories")
code_ref_branches = _keyed("code_ref_branches")
code_ref_extinctions = _keyed("code_ref_extinctions")

# Progressive and guarded rollouts (issue 17), per environment, keyed by the release's id.
automated_releases = _keyed("automated_releases")

# Single sign-on (issue 19): the settings, scope ("", ""), key "settings"; a sign-in under way,
# scope ("sign-in", ""), key the SHA-256 of its `state`.
sso = _keyed("sso")
