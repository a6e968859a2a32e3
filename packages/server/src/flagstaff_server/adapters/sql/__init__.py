"""The SQL store (SQLAlchemy 2 Core, synchronous) for SQLite and PostgreSQL, and its migrations."""
