"""The node's serving decisions in-process (httpx ASGI transport): 401 only for keys unknown to a
current node, 503 otherwise; ETag/304 and gzip; disk round trip; environment changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import orjson
import pytest
from delivery_support import ENVIRONMENT, PROJECT, SDK_KEY, change, environment, flag, segment
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.delivery.admission import Limits
from flagstaff_server.services.ports import Change
from support.deadlines import eventually
from support.in_process import asgi_client


class FakeFeed:
    """Serves a fixed backlog, then waits forever; `broken` makes every call fail."""

    def __init__(self, changes: list[Change], *, broken: bool = False) -> None:
        self.changes = changes
        self.broken = broken

    def publish(self, seq: int) -> None:
        return None

    async def subscribe(self, after_seq: int) -> AsyncIterator[Change]:
        if self.broken:
            raise ConnectionError("feed down")
        for item in self.changes:
            if item.seq > after_seq:
                yield item
        await asyncio.Event().wait()

    async def latest_seq(self) -> int:
        if self.broken:
            raise ConnectionError("feed down")
        return self.changes[-1].seq if self.changes else 0

    async def aclose(self) -> None:
        return None


BACKLOG = [
    change(1, "environment", ENVIRONMENT, environment()),
    change(2, "flag", "a", flag("a")),
    change(3, "segment", "s", segment("s")),
]


def _client(node: DeliveryNode) -> httpx.AsyncClient:
    return asgi_client(node.app, base_url="http://n")


def _config(tmp_path: Path | None = None, **limits: float) -> DeliveryConfig:
    return DeliveryConfig(
        data_dir=tmp_path,
        limits=Limits(**limits),  # type: ignore[arg-type]
        persist_delay_seconds=0.01,
        probe_interval_seconds=0.0,
        probe_timeout_seconds=0.5,
        feed_retry_seconds=0.05,
    )


async def test_a_current_node_serves_the_data_set_with_etag_and_gzip() -> None:
    node = DeliveryNode(FakeFeed(BACKLOG), _config())
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        first = await client.get("/sdk/latest-all", headers={"Authorization": SDK_KEY})
        assert first.status_code == 200
        assert first.json() == {"flags": {"a": flag("a")}, "segments": {"s": segment("s")}}
        assert first.headers["x-ld-envid"] == "0" * 24
        again = await client.get(
            "/sdk/latest-all",
            headers={"Authorization": f"api_key {SDK_KEY}", "If-None-Match": first.headers["etag"]},
        )
        assert again.status_code == 304
        raw = await client.get(
            "/sdk/latest-all", headers={"Authorization": SDK_KEY, "Accept-Encoding": "gzip"}
        )
        assert raw.headers["content-encoding"] == "gzip"
        assert raw.json() == first.json()
        single = await client.get("/sdk/flags/a", headers={"Authorization": f"Bearer {SDK_KEY}"})
        assert single.json() == flag("a")
        assert (await client.get("/sdk/segments/s", headers={"Authorization": SDK_KEY})).json() == (
            segment("s")
        )
        missing = await client.get("/sdk/flags/zz", headers={"Authorization": SDK_KEY})
        assert missing.status_code == 404
        flags = await client.get("/sdk/flags", headers={"Authorization": SDK_KEY})
        assert flags.json() == {"a": flag("a")}


async def test_an_unknown_key_is_401_only_once_the_node_is_current() -> None:
    node = DeliveryNode(FakeFeed(BACKLOG), _config())
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        response = await client.get("/sdk/latest-all", headers={"Authorization": "sdk-nope"})
        assert response.status_code == 401
        assert response.headers["content-type"] == "application/problem+json"
        no_key = await client.get("/sdk/latest-all")
        assert no_key.status_code == 401


async def test_a_node_that_never_reached_the_feed_answers_503_with_retry_after() -> None:
    node = DeliveryNode(FakeFeed(BACKLOG, broken=True), _config(retry_after_seconds=3))
    async with node.lifespan(), _client(node) as client:
        for key in (SDK_KEY, "sdk-nope"):
            response = await client.get("/sdk/latest-all", headers={"Authorization": key})
            assert response.status_code == 503
            assert 3 <= int(response.headers["retry-after"]) <= 6


async def test_a_key_from_a_newer_environment_is_found_by_the_probe_not_refused() -> None:
    feed = FakeFeed(BACKLOG[:2])
    node = DeliveryNode(feed, _config())
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        later = change(4, "environment", "staging", environment("sdk-staging"), env="staging")
        feed.changes.append(later)

        async def arrive() -> None:
            await eventually(lambda: node.counts["probe"] >= 1)
            node.apply(later)

        arrival = asyncio.create_task(arrive())
        response = await client.get("/sdk/latest-all", headers={"Authorization": "sdk-staging"})
        await arrival
        assert response.status_code == 200
        assert response.json() == {"flags": {}, "segments": {}}


async def test_when_the_probe_cannot_reach_the_feed_an_unknown_key_gets_503() -> None:
    feed = FakeFeed(BACKLOG)
    node = DeliveryNode(feed, _config())
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        feed.broken = True
        response = await client.get("/sdk/latest-all", headers={"Authorization": "sdk-nope"})
        assert response.status_code == 503


async def test_full_payloads_beyond_the_rate_get_503_but_304s_still_pass() -> None:
    node = DeliveryNode(FakeFeed(BACKLOG), _config(full_sends_per_second=0.001, full_send_burst=1))
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        auth = {"Authorization": SDK_KEY}
        first = await client.get("/sdk/latest-all", headers=auth)
        assert first.status_code == 200
        shed = await client.get("/sdk/latest-all", headers=auth)
        assert shed.status_code == 503
        assert "retry-after" in shed.headers
        cached = await client.get(
            "/sdk/latest-all", headers={**auth, "If-None-Match": first.headers["etag"]}
        )
        assert cached.status_code == 304
        metrics = (await client.get("/metrics")).text
        assert 'flagstaff_delivery_sheds_total{reason="full_send_rate"} 1' in metrics
        assert 'flagstaff_delivery_sends_total{payload="not_modified"} 1' in metrics


async def test_fdv2_poll_answers_a_current_basis_with_intent_none() -> None:
    node = DeliveryNode(FakeFeed(BACKLOG), _config())
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        auth = {"Authorization": SDK_KEY}
        full = (await client.get("/sdk/poll", headers=auth)).json()["events"]
        assert full[0]["data"]["payloads"][0]["intentCode"] == "xfer-full"
        state = full[-1]["data"]["state"]
        current = await client.get("/sdk/poll", params={"basis": state}, headers=auth)
        events = current.json()["events"]
        assert [e["data"]["payloads"][0]["intentCode"] for e in events] == ["none"]
        node.apply(change(5, "flag", "a", flag("a", 2)))
        delta = await client.get("/sdk/poll", params={"basis": state}, headers=auth)
        names = [e["event"] for e in delta.json()["events"]]
        assert names == ["server-intent", "put-object", "payload-transferred"]


async def test_an_environment_deletion_removes_its_key() -> None:
    node = DeliveryNode(FakeFeed(BACKLOG), _config())
    async with node.lifespan(), _client(node) as client:
        await eventually(lambda: node.current)
        node.apply(change(9, "environment", ENVIRONMENT, None))
        response = await client.get("/sdk/latest-all", headers={"Authorization": SDK_KEY})
        assert response.status_code == 401


async def test_invalid_items_are_dropped_and_counted() -> None:
    def check(kind: str, item: dict[str, object]) -> None:
        if kind == "flag" and item.get("on") is None:
            raise ValueError("on is required")

    node = DeliveryNode(FakeFeed(BACKLOG), _config(), check=check)
    async with node.lifespan():
        await eventually(lambda: node.current)
        node.apply(change(4, "flag", "bad", {"key": "bad", "version": 1}))
        assert node.counts["change_invalid"] == 1
        assert "bad" not in node.store.get(PROJECT, ENVIRONMENT).snapshot.flags  # type: ignore[union-attr]


async def test_snapshots_written_to_disk_are_served_at_once_with_the_feed_down(
    tmp_path: Path,
) -> None:
    node = DeliveryNode(FakeFeed(BACKLOG), _config(tmp_path))
    async with node.lifespan():
        await eventually(lambda: node.current)
        node.apply(change(4, "flag", "a", flag("a", 2, on=False)))
        await eventually(
            lambda: (tmp_path / "position.json").exists() and node.counts["persist"] > 0
        )
        await eventually(
            lambda: orjson.loads((tmp_path / "position.json").read_bytes())["position"] == 4
        )

    restarted = DeliveryNode(FakeFeed([], broken=True), _config(tmp_path))
    async with restarted.lifespan(), _client(restarted) as client:
        response = await client.get(
            "/sdk/latest-all", headers={"Authorization": SDK_KEY, "Accept-Encoding": "gzip"}
        )
        assert response.status_code == 200
        assert response.json()["flags"] == {"a": flag("a", 2, on=False)}
        assert restarted.position == 4
        assert not restarted.current
        unknown = await client.get("/sdk/latest-all", headers={"Authorization": "sdk-nope"})
        assert unknown.status_code == 503


async def test_a_corrupt_snapshot_file_makes_the_node_replay_the_feed(tmp_path: Path) -> None:
    node = DeliveryNode(FakeFeed(BACKLOG), _config(tmp_path))
    async with node.lifespan():
        await eventually(lambda: node.current)
        node.apply(change(4, "flag", "b", flag("b")))
        await eventually(lambda: (tmp_path / "position.json").exists())
    (tmp_path / "environments" / "garbage~x.json").write_bytes(b"{not json")
    again = DeliveryNode(FakeFeed(BACKLOG), _config(tmp_path))
    async with again.lifespan():
        assert again.position == 0
        await eventually(lambda: again.current)
        assert again.position == 3
        assert set(again.store.get(PROJECT, ENVIRONMENT).snapshot.flags) == {"a", "b"}  # type: ignore[union-attr]


@pytest.mark.parametrize("method", ["POST", "PUT"])
async def test_writes_are_refused_with_405(method: str) -> None:
    node = DeliveryNode(FakeFeed(BACKLOG), _config())
    async with _client(node) as client:
        response = await client.request(method, "/sdk/latest-all")
        assert response.status_code == 405


async def test_by_default_items_the_core_cannot_decode_are_never_served() -> None:
    node = DeliveryNode(FakeFeed(BACKLOG), _config())
    async with node.lifespan():
        await eventually(lambda: node.current)
        node.apply(change(4, "flag", "bad", {"key": "bad", "version": 1, "on": "yes"}))
        assert node.counts["change_invalid"] == 1
        env = node.store.get(PROJECT, ENVIRONMENT)
        assert env is not None
        assert "bad" not in env.snapshot.flags
