"""The first schema: projects, environments and their retired credentials, flags, segments,
tokens, the audit log and the change outbox with its sequence counter."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("tags", sa.Text, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "environments",
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("sdk_key", sa.Text, nullable=False),
        sa.Column("mobile_key", sa.Text, nullable=False),
        sa.Column("client_side_id", sa.Text, nullable=False),
        sa.Column("secure_mode", sa.Boolean, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("project", "key", name="pk_environments"),
        sa.ForeignKeyConstraint(
            ["project"], ["projects.key"], ondelete="CASCADE", name="fk_environments_project"
        ),
        sa.UniqueConstraint("sdk_key", name="uq_environments_sdk_key"),
        sa.UniqueConstraint("mobile_key", name="uq_environments_mobile_key"),
        sa.UniqueConstraint("client_side_id", name="uq_environments_client_side_id"),
    )
    op.create_table(
        "retired_credentials",
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("expires_ms", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("kind", "value", name="pk_retired_credentials"),
        sa.ForeignKeyConstraint(
            ["project", "environment"],
            ["environments.project", "environments.key"],
            ondelete="CASCADE",
            name="fk_retired_credentials_environment",
        ),
    )
    op.create_index(
        "ix_retired_credentials_environment", "retired_credentials", ["project", "environment"]
    )
    op.create_table(
        "flags",
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("project", "key", name="pk_flags"),
        sa.ForeignKeyConstraint(
            ["project"], ["projects.key"], ondelete="CASCADE", name="fk_flags_project"
        ),
    )
    op.create_table(
        "segments",
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("doc", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("project", "environment", "key", name="pk_segments"),
        sa.ForeignKeyConstraint(
            ["project", "environment"],
            ["environments.project", "environments.key"],
            ondelete="CASCADE",
            name="fk_segments_environment",
        ),
    )
    op.create_table(
        "tokens",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("secret_hash", sa.Text, nullable=False),
        sa.Column("project", sa.Text, nullable=True),
        sa.Column("environment", sa.Text, nullable=True),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("revoked_ms", sa.BigInteger, nullable=True),
        sa.Column("doc", sa.Text, nullable=False),
        sa.UniqueConstraint("secret_hash", name="uq_tokens_secret_hash"),
    )
    op.create_table(
        "audit",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("at_ms", sa.BigInteger, nullable=False),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("resource", sa.Text, nullable=False),
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("comment", sa.Text, nullable=True),
        sa.Column("patch", sa.Text, nullable=True),
        sa.Column("before", sa.Text, nullable=True),
        sa.Column("after", sa.Text, nullable=True),
    )
    op.create_index("ix_audit_at", "audit", ["at_ms"])
    op.create_index("ix_audit_resource", "audit", ["resource"])
    op.create_table(
        "changes",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("item", sa.Text, nullable=True),
        sa.Column("at_ms", sa.BigInteger, nullable=False),
    )
    counter = op.create_table(
        "change_counter",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
    )
    op.bulk_insert(counter, [{"id": 1, "seq": 0}])


def downgrade() -> None:
    for table in (
        "change_counter",
        "changes",
        "audit",
        "tokens",
        "segments",
        "flags",
        "retired_credentials",
        "environments",
        "projects",
    ):
        op.drop_table(table)
