"""The parts of `GET /status`, each read from the object it describes: the store, the change
feed (in-process or Redis), the delivery node with its client-side streams, and a probe with a
deadline so that a part that does not answer counts as down. The composition root (`app`)
decides which parts a role has; nothing here builds or starts one."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from flagstaff_server.adapters.process_feed import InProcessChangeFeed
from flagstaff_server.adapters.redis_feed import RedisChangeFeed
from flagstaff_server.delivery import DeliveryNode
from flagstaff_server.delivery.client_side import ClientDelivery
from flagstaff_server.delivery.freshness import Freshness
from flagstaff_server.errors import FlagstaffError, StoreUnavailable
from flagstaff_server.services.ports import ChangeFeed, Store

# A part that does not answer within this long counts as down in /status.
STATUS_TIMEOUT_SECONDS = 2.0


async def check(probe: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """The part `probe` reports, or "down" with why: no answer in time, or an error."""
    try:
        async with asyncio.timeout(STATUS_TIMEOUT_SECONDS):
            return await probe()
    except TimeoutError:
        return {"status": "down", "error": f"no answer within {STATUS_TIMEOUT_SECONDS}s"}
    except FlagstaffError as exc:
        return {"status": "down", "error": exc.message}
    except Exception as exc:
        # a driver error an adapter did not translate (Redis down with the database down
        # too): /status must still answer, above all during an outage
        return {"status": "down", "error": str(exc) or type(exc).__name__}


async def store_status(store: Store) -> dict[str, Any]:
    await asyncio.to_thread(store.ping)
    return {"status": "ok", "backend": getattr(store, "dialect", "memory")}


async def feed_status(feed: ChangeFeed) -> dict[str, Any]:
    if isinstance(feed, RedisChangeFeed):
        return await redis_feed_status(feed)
    latest = await feed.latest_seq()
    body: dict[str, Any] = {"status": "ok", "kind": "in-process", "latestSeq": latest}
    if isinstance(feed, InProcessChangeFeed):
        body["pollSeconds"] = feed.poll_seconds
    return body


async def redis_feed_status(feed: RedisChangeFeed) -> dict[str, Any]:
    """The Redis feed's part of `/status`: "ok"; "degraded" while Redis is down but the outbox
    answers (every role keeps working: delivery nodes poll the outbox, a little later); "down"
    when neither answers."""
    try:
        await feed.ping()
        redis_error = None
    except StoreUnavailable as exc:
        redis_error = exc.message
    try:
        latest = await feed.latest_seq()  # the outbox's head, or the stream's without it
    except StoreUnavailable as exc:
        return {"status": "down", "kind": "redis", "error": exc.message}
    body: dict[str, Any] = {"status": "ok", "kind": "redis", "latestSeq": latest}
    if redis_error is not None:
        body["status"] = "degraded"
        body["error"] = f"{redis_error}; changes are read from the database's outbox"
    body["publishFailures"] = feed.publish_failures
    body["pollSeconds"] = feed.poll_seconds
    return body


def delivery_status(
    node: DeliveryNode | None, freshness: Freshness | None, client: ClientDelivery | None
) -> dict[str, Any]:
    if node is None:
        return {"status": "starting"}
    ok = node.feed_connected and node.current
    return {
        "status": "ok" if ok else "degraded",
        "feedConnected": node.feed_connected,
        "current": node.current,
        "position": node.position,
        "dataAgeSeconds": None if freshness is None else freshness.age_seconds(),
        "epoch": node.epoch,
        "environments": len(node.store.environments),
        **client_delivery_status(client),
    }


def client_delivery_status(client: ClientDelivery | None) -> dict[str, Any]:
    if client is None:
        return {}
    reevaluator = client.reevaluator
    return {
        "clientStreams": reevaluator.open_streams,
        "clientReevaluationCpuSeconds": round(reevaluator.cpu_seconds, 3),
        "clientLastPassSeconds": round(reevaluator.last_pass_seconds, 3),
    }
