"""Recently acknowledged payload ids: found within the window, forgotten after it or beyond
capacity, never forgotten while an append is in flight."""

from __future__ import annotations

import asyncio

from flagstaff_server.ingest.recent import RecentIds


async def test_ids_live_for_the_window_and_in_flight_ones_stay() -> None:
    recent = RecentIds(window_ms=1_000, capacity=3)
    pending = asyncio.get_running_loop().create_future()
    recent.begin(("p", "e", "a"), 0, pending)
    assert recent.find(("p", "e", "a"), 10) is pending
    recent.remember(("p", "e", "b"), 100)
    recent.begin(("p", "e", "c"), 5_000, asyncio.get_running_loop().create_future())
    # "a" is past the window but in flight, so it stays; "b" has expired
    assert recent.find(("p", "e", "b"), 5_000) is False
    assert len(recent) == 3
    recent.settle(("p", "e", "a"), ok=True)
    assert recent.find(("p", "e", "a"), 500) is None
    recent.settle(("p", "e", "c"), ok=False)
    assert recent.find(("p", "e", "c"), 5_000) is False
    assert recent.find(("p", "x", "a"), 500) is False
