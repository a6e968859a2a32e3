"""The `region` block of /status: its shape for each database role, one probe per second however
often it is asked, a probe that fails or hangs shown as an error (never a hung /status), and an
API process recording its region as the primary's when it finds its database a primary."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from flagstaff_server.errors import RegionReadOnly, StoreUnavailable
from flagstaff_server.regions.region_status import RegionStatus, render
from flagstaff_server.services.ports import DatabaseState, StandbyState

T0 = datetime(2026, 12, 1, tzinfo=UTC)


class FakeReplication:
    """A replication port whose state the test sets; counts reads, keeps recorded regions."""

    def __init__(self, state: DatabaseState) -> None:
        self.current = state
        self.reads = 0
        self.recorded: list[str] = []
        self.failure: Exception | None = None
        self.record_failure: Exception | None = None
        self.gate: threading.Event | None = None

    def state(self) -> DatabaseState:
        self.reads += 1
        if self.gate is not None:
            self.gate.wait(10)
        if self.failure is not None:
            raise self.failure
        return self.current

    def promote(self, wait_seconds: float) -> bool:
        return False

    def record_primary_region(self, region: str, *, timeline: int | None, at: datetime) -> None:
        if self.record_failure is not None:
            raise self.record_failure
        self.recorded.append(region)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def status(replication: FakeReplication, clock: Clock, *, api: bool = False) -> RegionStatus:
    return RegionStatus(
        region="b",
        replication=replication,
        clock=lambda: T0,
        records_primary=api,
        monotonic=clock,
        timeout=0.5,
    )


STANDBY = DatabaseState(
    role="standby",
    timeline=1,
    replication_lag_seconds=0.0,
    upstream="10.0.0.1:5432",
    receiving=True,
    primary_region="a",
)


def test_a_standby_is_read_only_and_names_its_upstream_and_the_primary_region() -> None:
    assert render("b", STANDBY) == {
        "name": "b",
        "primaryRegion": "a",
        "readOnly": True,
        "database": {
            "role": "standby",
            "replicationLagSeconds": 0.0,
            "timeline": 1,
            "epoch": 1,
            "receiving": True,
            "upstream": "10.0.0.1:5432",
        },
    }


def test_a_primary_lists_its_standbys_and_embedded_is_its_own_primary() -> None:
    standby = StandbyState(
        name="b", address="127.0.0.1", state="streaming", replay_lag_seconds=0.004, lag_bytes=0
    )
    primary = DatabaseState(role="primary", timeline=2, standbys=(standby,), primary_region="a")
    block = render("a", primary)
    assert block["readOnly"] is False
    assert block["database"]["standbys"] == [
        {
            "name": "b",
            "address": "127.0.0.1",
            "state": "streaming",
            "replayLagSeconds": 0.004,
            "lagBytes": 0,
        }
    ]
    assert "receiving" not in block["database"]
    embedded = render("local", DatabaseState(role="embedded"))
    assert embedded["primaryRegion"] == "local"
    assert embedded["database"]["timeline"] is None


async def test_the_database_is_probed_at_most_once_a_second() -> None:
    replication, clock = FakeReplication(STANDBY), Clock()
    region = status(replication, clock)
    for _ in range(5):
        assert (await region.block())["database"]["role"] == "standby"
    assert replication.reads == 1
    clock.now += 1.5
    replication.current = DatabaseState(role="primary", timeline=2, primary_region="a")
    assert (await region.block())["database"]["role"] == "primary"
    assert replication.reads == 2


async def test_an_unreachable_database_is_an_error_in_the_block() -> None:
    replication = FakeReplication(STANDBY)
    replication.failure = StoreUnavailable("database db unavailable: connection refused")
    block = await status(replication, Clock()).block()
    assert block["readOnly"] is None
    assert block["database"] == {
        "role": "unknown",
        "error": "database db unavailable: connection refused",
    }


async def test_a_hung_probe_answers_with_an_error_and_is_not_started_twice() -> None:
    replication, clock = FakeReplication(STANDBY), Clock()
    replication.gate = threading.Event()
    region = status(replication, clock)
    try:
        first = await region.block()
        assert "did not answer within 0.5s" in first["database"]["error"]
        await region.block()
        assert replication.reads == 1  # the hung probe is awaited again, not repeated
    finally:
        replication.gate.set()


async def test_an_api_process_records_its_region_when_its_database_is_a_primary() -> None:
    promoted = DatabaseState(role="primary", timeline=2, primary_region="a")
    replication, clock = FakeReplication(promoted), Clock()
    assert (await status(replication, clock, api=True).block())["primaryRegion"] == "b"
    assert replication.recorded == ["b"]
    # a delivery process only reads; neither role records on a standby
    replication.recorded.clear()
    assert (await status(replication, clock).block())["primaryRegion"] == "a"
    replication.current = STANDBY
    await status(replication, clock, api=True).block()
    assert replication.recorded == []


async def test_a_failed_record_keeps_the_region_found() -> None:
    replication = FakeReplication(DatabaseState(role="primary", timeline=2, primary_region="a"))
    replication.record_failure = RegionReadOnly(region="b")
    assert (await status(replication, Clock(), api=True).block())["primaryRegion"] == "a"
