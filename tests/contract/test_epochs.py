"""The epoch contract on every store (memory, SQLite, PostgreSQL): an epoch start records where
it began, moves the change counter a gap on and the versions of every flag and segment, leaves a
marker change, and rolls back with its transaction; writers on a new PostgreSQL timeline start
one by themselves, once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
from contract_backends import PostgresServer
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.regions.epoch_watch import EpochWatch
from flagstaff_server.services import epochs
from flagstaff_server.services.access import Actor
from flagstaff_server.services.edit import parse_edit
from flagstaff_server.services.flags import create_flag, patch_flag
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import DatabaseTimeline, Store
from flagstaff_server.services.projects import ProjectRequest, create_project
from flagstaff_server.services.segments import create_segment
from support.deadlines import eventually
from support.in_process import control_plane

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ADMIN = Actor(token_id="t-admin", name="admin", role="admin")
GAP = 1000


def append(store: Store, key: str = "f") -> int:
    with store.unit_of_work() as uow:
        return uow.changes.append(
            project="p", environment="e", kind="flag", key=key, version=1, item=None, at=T0
        )


def begin(store: Store, reason: str = "restore", gap: int = GAP) -> int:
    with store.unit_of_work() as uow:
        record = uow.epochs.begin(reason=reason, timeline=None, system_id=None, at=T0, seq_gap=gap)
        return record.epoch


def plane_of(store: Store) -> ControlPlane:
    return control_plane(store, clock=lambda: T0)


def test_a_store_begins_in_epoch_one_after_seq_zero(store: Store) -> None:
    append(store)
    with store.unit_of_work(read_only=True) as uow:
        (first,) = uow.epochs.list()
        assert (first.epoch, first.started_after_seq, first.reason) == (1, 0, "initial")
        assert uow.epochs.current() == first
        assert [c.epoch for c in uow.changes.since(0)] == [1]


def test_an_epoch_start_moves_the_counter_a_gap_on(store: Store) -> None:
    before = [append(store, f"k{i}") for i in range(3)]
    assert begin(store) == 2
    after = append(store, "new")
    assert before == [1, 2, 3]
    assert after == 3 + GAP + 1
    with store.unit_of_work(read_only=True) as uow:
        assert [(e.epoch, e.started_after_seq) for e in uow.epochs.list()] == [(1, 0), (2, 3)]
        assert uow.epochs.current().epoch == 2
        assert uow.epochs.current().at == T0
        assert uow.changes.latest_seq() == after
        assert [(c.seq, c.epoch) for c in uow.changes.since(0)] == [
            (1, 1),
            (2, 1),
            (3, 1),
            (after, 2),
        ]
        # any position inside the gap resumes with the first change of the new epoch
        for position in (3, 4, 3 + GAP):
            assert [c.seq for c in uow.changes.since(position)] == [after]


def test_epochs_follow_each_other(store: Store) -> None:
    append(store)
    assert [begin(store), begin(store), begin(store)] == [2, 3, 4]
    with store.unit_of_work(read_only=True) as uow:
        starts = [e.started_after_seq for e in uow.epochs.list()]
    assert starts == [0, 1, 1 + GAP, 1 + 2 * GAP]
    assert append(store) == 1 + 3 * GAP + 1


def test_an_epoch_start_rolls_back_with_its_transaction(store: Store) -> None:
    append(store)

    def abort() -> None:
        with store.unit_of_work() as uow:
            uow.epochs.begin(reason="restore", timeline=None, system_id=None, at=T0, seq_gap=GAP)
            raise RuntimeError("abort")

    with pytest.raises(RuntimeError):
        abort()
    with store.unit_of_work(read_only=True) as uow:
        assert [e.epoch for e in uow.epochs.list()] == [1]
    assert append(store) == 2


def test_a_read_only_unit_of_work_cannot_begin_an_epoch(store: Store) -> None:
    with pytest.raises(RuntimeError), store.unit_of_work(read_only=True) as uow:
        uow.epochs.begin(reason="restore", timeline=None, system_id=None, at=T0, seq_gap=GAP)


def test_an_epoch_records_the_history_it_began_on(store: Store) -> None:
    with store.unit_of_work() as uow:
        uow.epochs.record_timeline(1, 7, "cluster-a")
        uow.epochs.begin(reason="promote", timeline=8, system_id="cluster-a", at=T0, seq_gap=GAP)
    with store.unit_of_work(read_only=True) as uow:
        recorded = [(e.epoch, e.timeline, e.system_id, e.reason) for e in uow.epochs.list()]
    assert recorded == [(1, 7, "cluster-a", "initial"), (2, 8, "cluster-a", "promote")]


def test_appends_racing_an_epoch_start_keep_commit_order_and_stay_in_their_epochs(
    store: Store,
) -> None:
    writers, per_writer = 4, 15
    barrier = threading.Barrier(writers + 1)

    def write(index: int) -> list[int]:
        barrier.wait()
        return [append(store, f"w{index}") for _ in range(per_writer)]

    with ThreadPoolExecutor(writers + 1) as pool:
        appended = [pool.submit(write, i) for i in range(writers)]
        barrier.wait()
        begin(store)
        seqs = sorted(seq for future in appended for seq in future.result())
    assert len(set(seqs)) == writers * per_writer
    with store.unit_of_work(read_only=True) as uow:
        boundary = uow.epochs.list()[1].started_after_seq
        changes = uow.changes.since(0, limit=10_000)
    assert [c.seq for c in changes] == seqs
    for change in changes:
        assert change.epoch == (1 if change.seq <= boundary else 2)
        assert change.seq <= boundary or change.seq > boundary + GAP
    old = [c.seq for c in changes if c.epoch == 1]
    new = [c.seq for c in changes if c.epoch == 2]
    assert old == list(range(1, len(old) + 1))  # no holes inside an epoch
    assert new == list(range(boundary + GAP + 1, boundary + GAP + 1 + len(new)))


# the service: start_epoch, follow_timeline and the writers' guard ---------------------------------


def seeded_plane(store: Store) -> ControlPlane:
    plane = plane_of(store)
    create_project(plane, ADMIN, ProjectRequest(key="p", name="P"))
    create_flag(plane, ADMIN, "p", {"key": "banner", "name": "Banner"})
    create_segment(plane, ADMIN, "p", "production", {"key": "beta", "name": "Beta"})
    return plane


def test_starting_an_epoch_moves_every_version_and_leaves_a_marker(store: Store) -> None:
    seeded_plane(store)
    with store.unit_of_work(read_only=True) as uow:
        flag = uow.flags.get("p", "banner")
        segment = uow.segments.get("p", "production", "beta")
        head = uow.changes.latest_seq()
    assert flag is not None
    assert segment is not None
    record = epochs.start_epoch(store, "restore", at=T0)
    assert (record.epoch, record.started_after_seq, record.reason) == (2, head, "restore")
    with store.unit_of_work(read_only=True) as uow:
        jumped = uow.flags.get("p", "banner")
        jumped_segment = uow.segments.get("p", "production", "beta")
        (marker,) = uow.changes.since(head)
    assert jumped is not None
    assert jumped_segment is not None
    assert jumped.version == jumped.doc["_version"] == flag.version + epochs.VERSION_GAP
    for name, config in jumped.doc["environments"].items():
        old = flag.doc["environments"][name]["version"]
        assert config["version"] == old + epochs.VERSION_GAP
        assert {k: v for k, v in config.items() if k != "version"} == {
            k: v for k, v in flag.doc["environments"][name].items() if k != "version"
        }
    assert jumped_segment.version == segment.version + epochs.VERSION_GAP
    assert jumped_segment.doc["version"] == jumped_segment.version
    assert (marker.kind, marker.epoch, marker.seq) == ("epoch", 2, head + epochs.SEQ_GAP + 1)
    assert marker.item is not None
    assert epochs.epoch_of_item(marker.item) == (2, head)


def test_the_first_edit_in_a_new_epoch_is_above_every_version_of_the_old_one(
    store: Store,
) -> None:
    plane = seeded_plane(store)
    edit = parse_edit([{"op": "replace", "path": "/description", "value": "x"}], semantic=False)
    on = parse_edit(
        {"instructions": [{"kind": "turnFlagOn"}], "environmentKey": "production"}, semantic=True
    )
    patch_flag(plane, ADMIN, "p", "banner", edit)
    patch_flag(plane, ADMIN, "p", "banner", on)
    with store.unit_of_work(read_only=True) as uow:
        old_versions = [c.version for c in uow.changes.since(0) if c.key == "banner"]
    epochs.start_epoch(store, "restore", at=T0)
    patch_flag(
        plane,
        ADMIN,
        "p",
        "banner",
        parse_edit(
            {"instructions": [{"kind": "turnFlagOff"}], "environmentKey": "production"},
            semantic=True,
        ),
    )
    with store.unit_of_work(read_only=True) as uow:
        last = [c for c in uow.changes.since(0) if c.key == "banner"][-1]
    assert last.epoch == 2
    assert last.item is not None
    assert last.item["version"] == last.version
    assert last.version == max(old_versions) + epochs.VERSION_GAP + 1


def test_follow_timeline_adopts_then_matches_then_starts_one_per_new_timeline() -> None:
    store = InMemoryStore(timeline=DatabaseTimeline(timeline=1, system_id="a"))
    assert epochs.follow_timeline(store, at=T0) is None  # epoch 1 takes the history it is on
    with store.unit_of_work(read_only=True) as uow:
        assert (uow.epochs.current().timeline, uow.epochs.current().system_id) == (1, "a")
    assert epochs.follow_timeline(store, at=T0) is None
    store.timeline = DatabaseTimeline(timeline=2, system_id="a")  # a promotion
    started = epochs.follow_timeline(store, "promote", at=T0)
    assert started is not None
    assert (started.epoch, started.timeline, started.reason) == (2, 2, "promote")
    assert epochs.follow_timeline(store, "promote", at=T0) is None
    store.timeline = DatabaseTimeline(timeline=2, system_id="b")  # a dump restored elsewhere
    again = epochs.follow_timeline(store, at=T0)
    assert again is not None
    assert (again.epoch, again.system_id) == (3, "b")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_nothing_to_follow_without_a_timeline(kind: str, tmp_path: Path) -> None:
    store: Store = (
        InMemoryStore() if kind == "memory" else SqlStore(sqlite_url(tmp_path / "flagstaff.db"))
    )
    assert epochs.follow_timeline(store, at=T0) is None
    with store.unit_of_work(read_only=True) as uow:
        assert [e.epoch for e in uow.epochs.list()] == [1]
    store.close()


def test_a_write_on_a_new_timeline_starts_the_epoch_first_once() -> None:
    store = InMemoryStore(timeline=DatabaseTimeline(timeline=1, system_id="a"))
    plane = seeded_plane(store)
    with store.unit_of_work(read_only=True) as uow:
        before = uow.flags.get("p", "banner")
        head = uow.changes.latest_seq()
    assert before is not None
    store.timeline = DatabaseTimeline(timeline=2, system_id="a")
    for key in ("first", "second"):
        create_flag(plane, ADMIN, "p", {"key": key, "name": key})
    with store.unit_of_work(read_only=True) as uow:
        assert [(e.epoch, e.timeline, e.reason) for e in uow.epochs.list()] == [
            (1, 1, "initial"),
            (2, 2, "timeline"),
        ]
        after = uow.changes.since(head)
        banner = uow.flags.get("p", "banner")
    assert after[0].kind == "epoch"
    assert after[0].seq == head + epochs.SEQ_GAP + 1
    assert {c.epoch for c in after} == {2}
    assert banner is not None
    assert banner.version == before.version + epochs.VERSION_GAP


def test_a_failed_write_on_a_new_timeline_leaves_no_epoch_and_the_next_write_starts_it() -> None:
    store = InMemoryStore(timeline=DatabaseTimeline(timeline=1, system_id="a"))
    plane = seeded_plane(store)
    store.timeline = DatabaseTimeline(timeline=2, system_id="a")
    with pytest.raises(Exception, match="already exists"):
        create_flag(plane, ADMIN, "p", {"key": "banner", "name": "again"})
    with store.unit_of_work(read_only=True) as uow:
        assert uow.epochs.current().epoch == 1
    create_flag(plane, ADMIN, "p", {"key": "other", "name": "Other"})
    with store.unit_of_work(read_only=True) as uow:
        assert uow.epochs.current().epoch == 2


# PostgreSQL's own history ------------------------------------------------------------------------


@pytest.mark.service
def test_postgres_reports_the_primary_timeline_the_migration_recorded(
    postgres_server: PostgresServer,
) -> None:
    store = SqlStore(postgres_server.create_database())
    try:
        with store.unit_of_work(read_only=True) as uow:
            found = uow.epochs.timeline()
            first = uow.epochs.current()
    finally:
        store.close()
    assert found is not None
    assert found.timeline >= 1
    assert found.system_id is not None
    assert found.system_id.isdigit()
    assert (first.epoch, first.timeline, first.system_id) == (1, found.timeline, found.system_id)


def test_sqlite_has_no_timeline(tmp_path: Path) -> None:
    store = SqlStore(sqlite_url(tmp_path / "flagstaff.db"))
    try:
        with store.unit_of_work(read_only=True) as uow:
            assert uow.epochs.timeline() is None
            assert uow.epochs.current().timeline is None
    finally:
        store.close()


@pytest.mark.service
def test_a_postgres_writer_on_another_timeline_than_recorded_starts_an_epoch_once(
    postgres_server: PostgresServer,
) -> None:
    store = SqlStore(postgres_server.create_database())
    try:
        plane = seeded_plane(store)
        with store.engine.begin() as connection:
            # as after a promotion: the server is on a timeline epoch 1 did not begin on
            connection.exec_driver_sql("UPDATE epochs SET timeline = timeline + 100")
        fresh = plane_of(store)  # a process started after the promotion
        create_flag(fresh, ADMIN, "p", {"key": "after", "name": "After"})
        create_flag(plane, ADMIN, "p", {"key": "also", "name": "Also"})
        with store.unit_of_work(read_only=True) as uow:
            found = uow.epochs.timeline()
            recorded = [(e.epoch, e.timeline, e.reason) for e in uow.epochs.list()]
            flags = {c.key: c for c in uow.changes.since(0, limit=100) if c.kind == "flag"}
    finally:
        store.close()
    assert found is not None
    assert recorded == [(1, found.timeline + 100, "initial"), (2, found.timeline, "timeline")]
    assert flags["after"].epoch == flags["also"].epoch == 2
    assert flags["banner"].epoch == 1


async def test_the_api_watch_starts_the_epoch_of_a_promotion_with_no_write() -> None:
    store = InMemoryStore(timeline=DatabaseTimeline(timeline=1, system_id="a"))
    plane = seeded_plane(store)
    published: list[int] = []
    plane.feed.publish = published.append  # type: ignore[method-assign]
    watch = EpochWatch(plane, interval_seconds=0.01)
    await watch.start()
    try:
        await eventually(lambda: watch.checks >= 1, what="a first check")
        assert watch.started == 0
        store.timeline = DatabaseTimeline(timeline=2, system_id="a")  # promoted meanwhile
        await eventually(lambda: watch.started == 1, what="the watch to start epoch 2")
        later = watch.checks + 3
        await eventually(lambda: watch.checks >= later, what="three more checks")
        assert watch.started == 1
    finally:
        await watch.stop()
    with store.unit_of_work(read_only=True) as uow:
        assert [(e.epoch, e.reason) for e in uow.epochs.list()] == [
            (1, "initial"),
            (2, "timeline"),
        ]
        marker = uow.changes.latest_seq()
    assert published == [marker]
