"""The kill switch on a delivery node, in-process (httpx ASGI transport, a fake feed, an
injected wall clock): a pushed override changes what every poll serves, with the version always
rising; each refusal is a 4xx problem naming the field and changes nothing; feed changes under
an override stay overridden; expiry and clear restore the stored flag above every version
served; the state survives a restart (also one that lost the snapshot's write); peers get the
document; the audit sink gets each one once the database answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from break_glass_support import Operator, now_ms
from delivery_support import ENVIRONMENT, PROJECT, SDK_KEY, change, environment, flag
from flagstaff_server.asgi import Receive, Scope, Send
from flagstaff_server.break_glass import BreakGlassApp, KillSwitch
from flagstaff_server.break_glass import handles as break_glass_path
from flagstaff_server.break_glass.document import ON, Action
from flagstaff_server.break_glass.peers import PeerForwarder
from flagstaff_server.break_glass.state_file import AuditItem
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.services.ports import Change
from flagstaff_server.tasks import cancel_and_wait
from support.deadlines import eventually
from support.in_process import asgi_client

URL = "/break-glass/overrides"
AUTH = {"Authorization": SDK_KEY}


class Feed:
    """A backlog, then whatever the test `push`es; never fails."""

    def __init__(self, changes: list[Change]) -> None:
        self.changes = list(changes)
        self.queue: asyncio.Queue[Change] = asyncio.Queue()

    def publish(self, seq: int) -> None:
        return None

    async def subscribe(self, after_seq: int) -> AsyncGenerator[Change, None]:
        for item in self.changes:
            if item.seq > after_seq:
                yield item
        while True:
            yield await self.queue.get()

    async def latest_seq(self) -> int:
        return self.changes[-1].seq if self.changes else 0

    async def aclose(self) -> None:
        return None


def backlog() -> list[Change]:
    return [
        change(1, "environment", ENVIRONMENT, environment()),
        change(2, "flag", "banner", flag("banner", 4)),
        change(3, "flag", "other", flag("other", 1)),
    ]


class Clock:
    def __init__(self) -> None:
        self.ms = now_ms()

    def __call__(self) -> int:
        return self.ms


class Node:
    """A delivery node with its kill switch and one ASGI app serving both."""

    def __init__(
        self,
        operator: Operator,
        data_dir: Path | None,
        *,
        feed: Feed | None = None,
        clock: Clock | None = None,
        audit_sink: Callable[[AuditItem], None] | None = None,
        peer_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.feed = feed or Feed(backlog())
        self.node = DeliveryNode(
            self.feed, DeliveryConfig(data_dir=data_dir, persist_delay_seconds=0.01)
        )
        self.clock = clock or Clock()
        forwarder = None
        if peer_transport is not None:
            forwarder = PeerForwarder(("http://peer",), transport=peer_transport)
        self.switch = KillSwitch(
            self.node,
            keyring=operator.keyring(),
            audit_sink=audit_sink,
            wall_ms=self.clock,
            tick_seconds=3600,
            forwarder=forwarder,
        )
        self.break_glass = BreakGlassApp(lambda: self.switch)

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and break_glass_path(scope["path"]):
            await self.break_glass(scope, receive, send)
        else:
            await self.node.app(scope, receive, send)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[httpx.AsyncClient]:
        await self.node.start()
        await self.switch.start()
        try:
            async with asgi_client(self.app, base_url="http://n") as client:
                await eventually(lambda: self.node.current)
                yield client
        finally:
            await self.switch.stop()
            await self.node.stop()


@pytest.fixture
def operator(tmp_path: Path) -> Operator:
    return Operator.create(tmp_path / "keys")


async def served(client: httpx.AsyncClient, key: str = "banner") -> dict[str, Any]:
    response = await client.get("/sdk/latest-all", headers=AUTH)
    assert response.status_code == 200
    item: dict[str, Any] = response.json()["flags"][key]
    return item


async def push(client: httpx.AsyncClient, document: dict[str, Any]) -> httpx.Response:
    method = "DELETE" if document["kind"] == "flagOverrideClear" else "POST"
    return await client.request(method, URL, content=orjson.dumps(document))


async def test_a_pushed_override_turns_the_flag_off_one_version_above(operator: Operator) -> None:
    node = Node(operator, None)
    async with node.running() as client:
        assert (await served(client))["on"] is True
        response = await push(client, operator.override("banner"))
        assert response.status_code == 200, response.text
        assert response.json()["servedVersion"] == 5
        flag_now = await served(client)
        assert (flag_now["on"], flag_now["version"]) == (False, 5)
        assert (await served(client, "other"))["on"] is True
        listing = (await client.get(URL)).json()
        assert [item["flag"] for item in listing["items"]] == ["banner"]
        assert listing["items"][0]["active"] is True
        assert listing["trustedKeys"] == [operator.key_id]


async def test_a_variation_override_serves_one_variation_to_everyone(operator: Operator) -> None:
    node = Node(operator, None)
    async with node.running() as client:
        response = await push(client, operator.override("banner", Action(on=True, variation=0)))
        assert response.status_code == 200, response.text
        flag_now = await served(client)
        assert flag_now["fallthrough"] == {"variation": 0}
        assert (flag_now["on"], flag_now["rules"], flag_now["targets"]) == (True, [], [])


async def test_every_refusal_is_a_4xx_problem_naming_the_field_and_applies_nothing(
    operator: Operator, tmp_path: Path
) -> None:
    clock = Clock()
    stranger = Operator.create(tmp_path / "stranger")
    node = Node(operator, tmp_path / "data", clock=clock)
    async with node.running() as client:
        accepted = operator.override("other", issued_at=clock.ms - 1000)
        assert (await push(client, accepted)).status_code == 200
        before = (await client.get("/sdk/latest-all", headers=AUTH)).content
        good = operator.override("banner", issued_at=clock.ms)
        cases: list[tuple[bytes | dict[str, Any], str, int, str]] = [
            ({**good, "action": {"on": True}}, "POST", 403, "/signature"),
            (stranger.override("banner"), "POST", 403, "/keyId"),
            (
                operator.override("banner", issued_at=clock.ms - 9000, expires_at=clock.ms - 5),
                "POST",
                400,
                "/expiresAt",
            ),
            (accepted, "POST", 409, "/id"),
            (operator.override("other", issued_at=clock.ms - 2000), "POST", 409, "/issuedAt"),
            (operator.override("banner", issued_at=clock.ms + 3_600_000), "POST", 400, "/issuedAt"),
            ({**good, "flag": 12}, "POST", 400, "/flag"),
            (b'{"kind": "flagOverride",', "POST", 400, ""),
            (operator.override("missing"), "POST", 404, "/flag"),
            (operator.override("banner", environment="staging"), "POST", 404, "/environment"),
            (
                operator.override("banner", Action(on=True, variation=5)),
                "POST",
                400,
                "/action/variation",
            ),
            (good, "DELETE", 400, "/kind"),
            (operator.clear("banner"), "POST", 400, "/kind"),
        ]
        for body, method, status, path in cases:
            content = body if isinstance(body, bytes) else orjson.dumps(body)
            response = await client.request(method, URL, content=content)
            assert response.status_code == status, (path, response.text)
            assert response.headers["content-type"] == "application/problem+json"
            problem = response.json()
            assert problem["path"] == path, problem
            assert problem["status"] == status
            assert problem["detail"]
        assert (await client.get("/sdk/latest-all", headers=AUTH)).content == before
        assert len((await client.get(URL)).json()["items"]) == 1


async def test_feed_changes_under_an_override_stay_overridden_and_versions_keep_rising(
    operator: Operator,
) -> None:
    node = Node(operator, None)
    async with node.running() as client:
        await push(client, operator.override("banner"))  # stored 4, served 5 off
        node.feed.queue.put_nowait(change(4, "flag", "banner", flag("banner", 5, fallthrough=0)))
        await eventually(lambda: node.node.position == 4)
        flag_now = await served(client)
        assert (flag_now["on"], flag_now["version"], flag_now["fallthrough"]) == (
            False,
            6,
            {"variation": 0},
        )


async def test_expiry_restores_the_stored_flag_above_every_version_served(
    operator: Operator,
) -> None:
    clock = Clock()
    node = Node(operator, None, clock=clock)
    async with node.running() as client:
        document = operator.override("banner", issued_at=clock.ms, expires_at=clock.ms + 60_000)
        assert (await push(client, document)).status_code == 200
        assert node.switch.expire() == 0
        clock.ms += 60_000
        assert node.switch.expire() == 1
        flag_now = await served(client)
        assert (flag_now["on"], flag_now["version"]) == (True, 6)
        # the feed's next version (5) is still served above the 6 SDKs already saw
        node.feed.queue.put_nowait(change(4, "flag", "banner", flag("banner", 5, on=False)))
        await eventually(lambda: node.node.position == 4)
        flag_now = await served(client)
        assert (flag_now["on"], flag_now["version"]) == (False, 7)
        listing = (await client.get(URL)).json()["items"]
        assert listing[0]["active"] is False


async def test_a_signed_clear_ends_the_override(operator: Operator) -> None:
    node = Node(operator, None)
    async with node.running() as client:
        clock_ms = now_ms()
        await push(client, operator.override("banner", ON, issued_at=clock_ms - 10))
        await push(client, operator.override("banner", issued_at=clock_ms - 5))
        assert (await served(client))["version"] == 6  # on (5), then off (6)
        response = await push(client, operator.clear("banner", issued_at=clock_ms))
        assert response.status_code == 200, response.text
        assert response.json()["action"] is None
        flag_now = await served(client)
        assert (flag_now["on"], flag_now["version"]) == (True, 7)
        replayed = await push(client, operator.override("banner", issued_at=clock_ms - 1))
        assert (replayed.status_code, replayed.json()["path"]) == (409, "/issuedAt")


async def test_an_override_survives_a_restart_without_feed_or_database(
    operator: Operator, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    async with Node(operator, data).running() as client:
        assert (await push(client, operator.override("banner"))).status_code == 200
    restarted = Node(operator, data, feed=Feed([]))  # the feed knows nothing any more
    await restarted.node.start()
    await restarted.switch.start()
    try:
        assert restarted.node.store.get(PROJECT, ENVIRONMENT) is not None
        snapshot = restarted.node.store.get(PROJECT, ENVIRONMENT).snapshot  # type: ignore[union-attr]
        banner = orjson.loads(snapshot.flags["banner"].encoded)
        assert (banner["on"], banner["version"]) == (False, 5)
        assert len(restarted.switch.overlay.seen) == 1
    finally:
        await restarted.switch.stop()
        await restarted.node.stop()


async def test_a_crash_before_the_snapshot_write_still_restores_the_override(
    operator: Operator, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first = Node(operator, data)
    await first.node.start()
    await first.switch.start()
    await eventually(lambda: first.node.current)
    # the backlog is on disk
    await eventually(lambda: getattr(first.node.persister.persisted_position, "seq", 0) == 3)
    # the snapshot files are debounced: stop every loop before they are written again
    await cancel_and_wait(first.node._tasks)
    await first.switch.stop()
    async with asgi_client(first.app, base_url="http://n") as client:
        assert (await push(client, operator.override("banner"))).status_code == 200
    restarted = Node(operator, data, feed=Feed([]))
    async with restarted.running() as client:
        flag_now = await served(client)
        assert (flag_now["on"], flag_now["version"]) == (False, 5)


async def test_peers_get_the_document_and_apply_it(operator: Operator) -> None:
    peer = Node(operator, None)
    async with peer.running() as peer_client:
        node = Node(operator, None, peer_transport=httpx.ASGITransport(app=peer.app))
        async with node.running() as client:
            assert (await push(client, operator.override("banner"))).status_code == 200

            async def peer_serves_it_off() -> bool:
                return (await served(peer_client))["on"] is False

            await eventually(peer_serves_it_off)
            assert node.switch.forwarder.counts["forwarded"] == 1


async def test_documents_reach_the_audit_sink_once_it_answers(
    operator: Operator, tmp_path: Path
) -> None:
    recorded: list[AuditItem] = []
    database_up = False

    def sink(item: AuditItem) -> None:
        if not database_up:
            raise StoreUnavailable("database down")
        recorded.append(item)

    data = tmp_path / "data"
    node = Node(operator, data, audit_sink=sink)
    node_recorder = node.switch.recorder
    assert node_recorder is not None
    node_recorder.retry_seconds = node_recorder.retry_max_seconds = 0.05
    async with node.running() as client:
        document = operator.override("banner")
        assert (await push(client, document)).status_code == 200
        await eventually(lambda: node_recorder.counts["error"] >= 1)
        assert node_recorder.waiting
    # the waiting document is kept on disk: a restart records it once the database is back
    database_up = True
    restarted = Node(operator, data, audit_sink=sink)
    async with restarted.running():
        await eventually(lambda: len(recorded) == 1)
        assert recorded[0].document["id"] == document["id"]
        assert restarted.switch.recorder is not None
        await eventually(lambda: not restarted.switch.recorder.waiting)  # type: ignore[union-attr]
