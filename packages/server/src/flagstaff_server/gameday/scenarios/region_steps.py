"""Steps the region scenarios share: losing region A whole, and its ingest node coming back.

Losing A: its API, delivery and ingest nodes are SIGKILLed and its PostgreSQL primary killed,
all at once, and A's load balancers (the fault proxies clients reach A through) move A's
traffic to B's nodes, as a global load balancer's health check would. B's standby, no longer
receiving, goes on serving through B's delivery node.
"""

from __future__ import annotations

import asyncio
import time

from flagstaff_server.gameday.scenario import Check, Drill


async def lose_region_a(drill: Drill) -> None:
    """Region A lost, its traffic moved to B; then an edit is tried (`refused_while_lost`)."""
    topology = drill.topology
    a, b = topology.a, topology.b
    drill.begin_fault()
    drill.notes["last_accepted_on_a"] = drill.timeline.current()
    drill.notes["lost"] = time.monotonic()
    await asyncio.gather(
        *(asyncio.to_thread(node.kill) for node in a.nodes()),
        asyncio.to_thread(a.database.kill),
    )
    assert a.delivery_proxy is not None
    assert a.ingest_proxy is not None
    a.delivery_proxy.retarget(b.delivery.port)
    a.ingest_proxy.retarget(b.ingest.port)
    drill.notes["traffic_moved"] = time.monotonic()
    drill.notes["edit_while_lost"] = await drill.edit()


def refused_while_lost(drill: Drill) -> Check:
    accepted = drill.notes.get("edit_while_lost")
    return Check(
        "edits refused while A was lost",
        accepted is False,
        f"an edit after the loss: {accepted} (True: accepted)",
    )


async def a_ingest_returns(drill: Drill) -> None:
    """Region A's ingest host comes back (its disk survived) and drains its journal into the
    analytics store: it reads B's database, A's is gone. Without it, events A acknowledged
    (journalled) but had not yet processed when it was killed would be missing."""
    topology = drill.topology
    ingest = topology.a.ingest
    ingest.args = ["--database", topology.b.database.url]
    ingest.launch()
    await asyncio.to_thread(ingest.wait_ready)
