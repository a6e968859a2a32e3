"""Alembic environment for the analytics database: runs the migrations on the connection
(already inside a locked transaction) that `flagstaff_server.ingest.migration` hands in; never
opens its own."""

from __future__ import annotations

from alembic import context

from flagstaff_server.ingest.migration import VERSION_TABLE

context.configure(
    connection=context.config.attributes["connection"],
    version_table=VERSION_TABLE,
    transactional_ddl=True,
)
with context.begin_transaction():
    context.run_migrations()
