"""The existing local accounts become members (issue 19): each account's document gets its
LaunchDarkly base role (`baseRole`, its fixed role) and no custom roles; the oldest admin becomes
the account owner when there is none. No column changes; the fixed `role` column stays as it is."""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision: str | None = "0014"
branch_labels: str | None = None
depends_on: str | None = None

ACCOUNTS = sa.table(
    "accounts",
    sa.column("id", sa.Text),
    sa.column("role", sa.Text),
    sa.column("created_ms", sa.BigInteger),
    sa.column("doc", sa.Text),
)


def upgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(ACCOUNTS).order_by(ACCOUNTS.c.created_ms, ACCOUNTS.c.id)
    ).all()
    docs = {row.id: json.loads(row.doc) for row in rows}
    has_owner = any(doc.get("baseRole") == "owner" for doc in docs.values())
    for row in rows:
        doc = docs[row.id]
        doc.setdefault("baseRole", row.role)
        doc.setdefault("customRoles", [])
        if not has_owner and row.role == "admin":
            doc["baseRole"] = "owner"
            has_owner = True
        connection.execute(
            sa.update(ACCOUNTS).where(ACCOUNTS.c.id == row.id).values(doc=json.dumps(doc))
        )


def downgrade() -> None:
    connection = op.get_bind()
    for row in connection.execute(sa.select(ACCOUNTS)).all():
        doc = json.loads(row.doc)
        for key in ("baseRole", "customRoles", "deactivated", "lastSeen"):
            doc.pop(key, None)
        connection.execute(
            sa.update(ACCOUNTS).where(ACCOUNTS.c.id == row.id).values(doc=json.dumps(doc))
        )
