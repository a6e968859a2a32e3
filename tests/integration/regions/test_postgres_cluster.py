"""The private PostgreSQL cluster harness (`flagstaff_server.regions.postgres_cluster`) with real
servers: a hot standby replays what the primary commits and refuses writes; the servers are real
(fsync on, no archive); a killed primary restarts with every commit; a promoted standby writes on a
new timeline; and a killed old primary rejoins the new one with pg_rewind, losing what it committed
after the fork."""

from __future__ import annotations

import psycopg
import pytest
from flagstaff_server.regions.postgres_cluster import ClusterError, PostgresInstance
from regions_support import postgres_cluster

pytestmark = [pytest.mark.service, pytest.mark.slow]


def rows(server: PostgresInstance) -> list[int]:
    """The values of table `t`, in order."""
    return list(server.value("SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM t"))


def test_a_standby_replays_commits_of_the_primary_and_refuses_writes() -> None:
    with postgres_cluster() as cluster:
        primary = cluster.start_primary("a")
        standby = cluster.start_standby(primary, "b")
        assert (primary.in_recovery(), standby.in_recovery()) == (False, True)
        assert primary.value("SELECT application_name FROM pg_stat_replication") == "b"
        primary.execute("CREATE TABLE t (x int)")
        primary.execute("INSERT INTO t VALUES (1), (2)")
        standby.wait_for_replay(primary.wal_lsn())
        assert rows(standby) == [1, 2]
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            standby.execute("INSERT INTO t VALUES (3)")
        assert primary.timeline() == standby.timeline() == 1
        # the settings the harness promises: durable, replication-ready, no archive
        for name, value in (("fsync", "on"), ("full_page_writes", "on"), ("archive_mode", "off")):
            assert (primary.value(f"SHOW {name}"), standby.value(f"SHOW {name}")) == (value, value)


def test_a_killed_primary_restarts_with_every_commit() -> None:
    with postgres_cluster() as cluster:
        primary = cluster.start_primary("a")
        primary.execute("CREATE TABLE t (x int)")
        primary.execute("INSERT INTO t VALUES (7)")
        primary.kill()
        assert not primary.is_running()
        with pytest.raises(psycopg.OperationalError):
            primary.value("SELECT 1")
        primary.start()
        assert rows(primary) == [7]
        assert "database system was interrupted" in primary.log_tail(20_000)


def test_waiting_for_replay_fails_naming_the_lsn_when_the_standby_is_stopped() -> None:
    with postgres_cluster() as cluster:
        primary = cluster.start_primary("a")
        standby = cluster.start_standby(primary, "b")
        standby.stop()
        primary.execute("CREATE TABLE t (x int)")
        target = primary.wal_lsn()
        with pytest.raises(ClusterError, match=target):
            standby.wait_for_replay(target, timeout=0.5)


def test_a_promoted_standby_writes_on_a_new_timeline_with_the_data_it_replayed() -> None:
    with postgres_cluster() as cluster:
        primary = cluster.start_primary("a")
        standby = cluster.start_standby(primary, "b")
        primary.execute("CREATE TABLE t (x int)")
        primary.execute("INSERT INTO t VALUES (1)")
        standby.wait_for_replay(primary.wal_lsn())
        primary.kill()
        standby.promote()
        assert not standby.in_recovery()
        assert standby.timeline() == 2
        standby.execute("INSERT INTO t VALUES (2)")
        assert rows(standby) == [1, 2]


def test_the_old_primary_rejoins_with_pg_rewind_and_loses_its_unreplicated_commit() -> None:
    with postgres_cluster() as cluster:
        primary = cluster.start_primary("a")
        standby = cluster.start_standby(primary, "b")
        primary.execute("CREATE TABLE t (x int)")
        primary.execute("INSERT INTO t VALUES (1)")
        standby.wait_for_replay(primary.wal_lsn())
        standby.stop()  # the link breaks: what A commits now never reaches B
        primary.execute("INSERT INTO t VALUES (99)")
        primary.kill()
        standby.start()
        standby.promote()
        standby.execute("INSERT INTO t VALUES (2)")

        cluster.rejoin(primary, standby)

        assert primary.in_recovery()
        primary.wait_for_replay(standby.wal_lsn())
        assert rows(primary) == [1, 2]
        assert primary.timeline() == 2
        assert standby.value("SELECT application_name FROM pg_stat_replication") == "a"
