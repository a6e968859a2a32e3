"""Alembic scripts for the analytics database (its own chain and version table)."""
