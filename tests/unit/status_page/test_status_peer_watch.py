"""The watch over this node's and its peers' `/status`: an answer is kept with when it came; a
peer that stops answering keeps its last answer, marked with the error; what a peer sends is
bounded and must be a JSON object; the readings survive a restart in the data directory; a
relay's upstream feed replaces the notices it had only when it answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
from flagstaff_server.notice import Notice, notice_json
from flagstaff_server.status_page.components import SELF
from flagstaff_server.status_page.peer_watch import MAX_BODY_BYTES, PeerWatch
from support.deadlines import eventually

PEER = "http://peer:8030/status"
FEED = "http://upstream:8030/status/feed.json"


class Peers:
    """A transport answering each URL with what the test sets (None: connection refused)."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, bytes] | None] = {}

    def handle(self, request: httpx.Request) -> httpx.Response:
        answer = self.answers.get(str(request.url))
        if answer is None:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(answer[0], content=answer[1])


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def own_status() -> tuple[int, dict[str, Any]]:
    return 200, {"role": "delivery", "ready": True}


def watch(peers: Peers, clock: Clock, **more: Any) -> PeerWatch:
    return PeerWatch(own_status=own_status, peers=(PEER,), wall=clock, **more)


async def poll(watched: PeerWatch, peers: Peers) -> None:
    async with httpx.AsyncClient(transport=httpx.MockTransport(peers.handle)) as client:
        await watched.poll_once(client)


async def test_answers_are_kept_and_a_silent_peer_keeps_its_last_answer() -> None:
    peers, clock = Peers(), Clock()
    watched = watch(peers, clock)
    peers.answers[PEER] = (200, b'{"role": "api"}')
    await poll(watched, peers)
    peer = watched.readings[PEER]
    assert (peer.body, peer.last_seen_ms, peer.error, peer.reachable) == (
        {"role": "api"},
        1_000_000,
        None,
        True,
    )
    assert watched.readings[SELF].body == {"role": "delivery", "ready": True}
    clock.now = 1060.0
    peers.answers[PEER] = None
    await poll(watched, peers)
    assert (peer.body, peer.last_seen_ms, peer.checked_ms, peer.reachable) == (
        {"role": "api"},
        1_000_000,
        1_060_000,
        False,
    )
    assert peer.error == "connection refused or unreachable"


async def test_a_starting_peer_answers_503_with_its_body_and_anything_else_is_refused() -> None:
    peers, clock = Peers(), Clock()
    watched = watch(peers, clock)
    peers.answers[PEER] = (503, b'{"ready": false}')
    await poll(watched, peers)
    assert watched.readings[PEER].reachable
    for status, body, error in (
        (404, b"{}", "answered 404"),
        (200, b"[1, 2]", "answered JSON that is not an object"),
        (200, b"<html>", "answered something that is not JSON"),
        (200, b" " * (MAX_BODY_BYTES + 1), f"answered more than {MAX_BODY_BYTES} bytes"),
    ):
        peers.answers[PEER] = (status, body)
        await poll(watched, peers)
        assert watched.readings[PEER].error == error
        assert watched.readings[PEER].body == {"ready": False}


async def test_the_readings_survive_a_restart_marked_unreachable(tmp_path: Path) -> None:
    peers, clock = Peers(), Clock()
    transport = httpx.MockTransport(peers.handle)
    first = watch(peers, clock, directory=tmp_path, transport=transport)
    peers.answers[PEER] = (200, b'{"role": "api", "region": {"name": "a"}}')
    await first.start()
    await eventually(lambda: first.rounds >= 1)
    await first.stop()
    peers.answers[PEER] = None
    second = watch(peers, clock, directory=tmp_path, transport=transport, interval_seconds=60)
    await second.start()
    await eventually(lambda: second.rounds >= 1)
    await second.stop()
    reading = second.readings[PEER]
    assert reading.body == {"role": "api", "region": {"name": "a"}}
    assert reading.last_seen_ms == 1_000_000
    assert not reading.reachable
    assert reading.error == "connection refused or unreachable"


async def test_an_upstream_feed_replaces_the_notices_only_when_it_answers() -> None:
    peers, clock = Peers(), Clock()
    taken: list[list[Notice]] = []
    watched = watch(peers, clock, notice_feeds=(FEED,), on_notices=taken.append)
    notice = Notice(id="n1", title="read-only", created_ms=5)
    bad = {"_id": "n2", "title": ""}
    peers.answers[FEED] = (200, orjson.dumps({"notices": [notice_json(notice), bad]}))
    await poll(watched, peers)
    assert taken == [[notice]]
    peers.answers[FEED] = None
    await poll(watched, peers)
    assert taken == [[notice]]
