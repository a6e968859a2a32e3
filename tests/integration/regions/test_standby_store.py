"""The SQL store on a real hot standby: opened without migrating (the schema is checked, and a
standby behind the code is refused with a message saying what to do), it reads what the primary
wrote and turns the standby's refusal of a write into `RegionReadOnly` naming the region, the
primary's region and where it replicates from; the same store writes once the standby is
promoted, with no reopening. The replication port reports role, timeline, lag and standbys."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from flagstaff_server.adapters.sql.migration import upgrade
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.errors import RegionReadOnly, StoreUnavailable
from flagstaff_server.services.ports import ProjectRecord
from regions_support import postgres_cluster

pytestmark = [pytest.mark.service, pytest.mark.slow]

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def project(key: str) -> ProjectRecord:
    return ProjectRecord(key=key, name=key.title(), doc={}, created=T0)


def test_a_standby_store_reads_refuses_writes_by_region_and_writes_once_promoted() -> None:
    with postgres_cluster() as cluster:
        a = cluster.start_primary("a")
        b = cluster.start_standby(a, "b")
        primary = SqlStore(a.url, region="a")
        primary.replication.record_primary_region("a", timeline=1, at=T0)
        with primary.unit_of_work() as uow:
            uow.projects.add(project("shop"))
        b.wait_for_replay(a.wal_lsn())

        standby = SqlStore(b.url, region="b")  # no migration attempted: it would fail
        try:
            with standby.unit_of_work(read_only=True) as uow:
                assert [p.key for p in uow.projects.list()] == ["shop"]
            with pytest.raises(RegionReadOnly) as refused, standby.unit_of_work() as uow:
                uow.projects.add(project("other"))
            message = refused.value.message
            assert message.startswith("region b is read-only: its database is a standby")
            assert f"replicating from 127.0.0.1:{a.port}" in message
            assert "writes go to the primary region (a)" in message
            state = standby.replication.state()
            assert (state.role, state.timeline, state.receiving) == ("standby", 1, True)
            assert state.primary_region == "a"
            assert state.replication_lag_seconds is not None

            listed = primary.replication.state()
            assert listed.role == "primary"
            assert [(s.name, s.state) for s in listed.standbys] == [("b", "streaming")]

            primary.close()
            a.kill()
            b.promote()
            with standby.unit_of_work() as uow:  # the same store, not reopened
                uow.projects.add(project("other"))
                seq = uow.changes.append(
                    project="other",
                    environment="e",
                    kind="flag",
                    key="k",
                    version=1,
                    item=None,
                    at=T0,
                )
            assert seq == 1
            promoted = standby.replication.state()
            assert (promoted.role, promoted.timeline) == ("primary", 2)
        finally:
            standby.close()
            primary.close()


def test_a_standby_behind_the_code_is_refused_with_what_to_do() -> None:
    with postgres_cluster() as cluster:
        a = cluster.start_primary("a")
        b = cluster.start_standby(a, "b")
        old = SqlStore(a.url, migrate=False)
        upgrade(old.engine, "0003")  # a primary still run by an older Flagstaff
        old.close()
        b.wait_for_replay(a.wal_lsn())
        with pytest.raises(StoreUnavailable) as refused:
            SqlStore(b.url, region="b")
        assert "standby with schema 0003" in refused.value.message
        assert "upgrade Flagstaff in the primary region first" in refused.value.message
        # a delivery node comes up anyway and keeps trying: the primary's upgrade replicates
        later = SqlStore(b.url, region="b", connect_later=True)
        try:
            current = SqlStore(a.url)
            current.close()
            b.wait_for_replay(a.wal_lsn())
            with later.unit_of_work(read_only=True) as uow:
                assert uow.projects.list() == []
        finally:
            later.close()
