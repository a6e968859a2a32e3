"""A PostgreSQL server of a test's own that the test may stop (an outage) and start again, never
the machine's shared one: one primary of the product's `regions.postgres_cluster` (or a whole
`private_cluster` to start primaries and standbys in), run for speed without fsync. Missing
server binaries (or, as root, a `postgres` user and runuser) are a missing prerequisite: skipped
locally, a failure in CI."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flagstaff_server.regions.postgres_cluster import (
    ClusterError,
    PostgresCluster,
    PostgresInstance,
)

from support.prerequisites import missing_prerequisite

UNSAFE_FAST = {"fsync": "off", "full_page_writes": "off"}
"""A crash may lose the server's data: what a throwaway server for a test can afford."""


@contextmanager
def private_cluster() -> Iterator[PostgresCluster]:
    """Private PostgreSQL servers of the test's own (none started yet), removed at the end."""
    try:
        cluster = PostgresCluster(settings=UNSAFE_FAST)
    except ClusterError as exc:
        missing_prerequisite(str(exc))
        raise  # unreachable: missing_prerequisite skips or fails
    with cluster:
        yield cluster


@contextmanager
def private_postgres() -> Iterator[PostgresInstance]:
    """A started server (`url`, `stop()`, `start()`, `is_running()`), removed at the end."""
    with private_cluster() as cluster:
        yield cluster.start_primary("private")
