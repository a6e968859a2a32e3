"""Test support for two regions: the product's private PostgreSQL cluster (primary in region A,
hot standby in region B) as a fixture-style context manager that skips locally (fails in CI)
when the server binaries are missing.

Shared by the tests in this directory; asserts nothing about Flagstaff itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flagstaff_server.regions.postgres_cluster import (
    ClusterError,
    PostgresBinaries,
    PostgresCluster,
    run_as_user,
)
from support.prerequisites import missing_prerequisite


@contextmanager
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A cluster of private servers (none started yet), removed at the end."""
    try:
        binaries = PostgresBinaries.find()
        run_as_user()
    except ClusterError as exc:
        missing_prerequisite(str(exc))
        raise  # unreachable: missing_prerequisite skips or fails
    with PostgresCluster(binaries=binaries) as cluster:
        yield cluster
