"""The relay's change numbering: changes made from upstream data (or offline files) get feed
sequence numbers continuing the delivery node's persisted position, so the node's seq and
version checks, disk files and FDv2 selectors work exactly as behind the control plane.

`RelayFeed` is also the node's `ChangeFeed`: the relay applies its changes to the node directly
on the event loop (no queue between upstream and SDKs), so a subscription has nothing to replay
and only reports the head.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from datetime import UTC, datetime

from flagstaff_server.services.ports import Change, ChangeKind, JsonObject


class RelayFeed:
    def __init__(self) -> None:
        self.seq = 0
        self._closed = asyncio.Event()

    def start_at(self, seq: int) -> None:
        """Continue numbering after `seq` (the position the node loaded from disk)."""
        self.seq = max(self.seq, seq)

    def next_change(
        self,
        *,
        project: str,
        environment: str,
        kind: ChangeKind,
        key: str,
        version: int,
        item: JsonObject | None,
    ) -> Change:
        self.seq += 1
        return Change(
            seq=self.seq,
            project=project,
            environment=environment,
            kind=kind,
            key=key,
            version=version,
            item=item,
            at=datetime.now(UTC),
        )

    # the ChangeFeed port -----------------------------------------------------------------------

    def publish(self, seq: int) -> None:
        """Nothing to announce: changes reach the node when they are numbered."""

    async def subscribe(self, after_seq: int) -> AsyncGenerator[Change, None]:
        self.start_at(after_seq)
        await self._closed.wait()
        nothing: tuple[Change, ...] = ()
        for change in nothing:  # an async generator that ends when the feed closes, yielding none
            yield change

    async def latest_seq(self) -> int:
        return self.seq

    async def aclose(self) -> None:
        self._closed.set()
