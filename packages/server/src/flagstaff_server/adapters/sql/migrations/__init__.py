"""Alembic migrations of the SQL store; applied by `flagstaff_server.adapters.sql.migration`."""
