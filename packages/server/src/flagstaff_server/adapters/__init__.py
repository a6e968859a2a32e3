"""Implementations of the storage and change-feed ports: in memory, SQL (SQLite, PostgreSQL),
in-process and Redis Streams feeds. Nothing above the services layer imports these directly."""
