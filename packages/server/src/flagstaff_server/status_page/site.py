"""One node's status page, assembled: its notice board (kept in `<data dir>/status/`, written by
the delivery node's persister before its snapshots), the watch over its own and its peers'
`/status`, and the feed and page built from them. Built before the node starts and started
after it by the composition root (`flagstaff serve`'s delivery roles, the relay).

The page costs a request no I/O and little CPU: the feed is built from what the background
round left, and the feed and the page are each built at most once per `cache_seconds` however
many people reload during an incident.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagstaff_server.delivery.node import DeliveryNode
from flagstaff_server.notice import Notice
from flagstaff_server.services.ports import Change
from flagstaff_server.status_page import notice_board, page_html
from flagstaff_server.status_page.components import SELF, region_of
from flagstaff_server.status_page.feed import NodeInfo, build_feed
from flagstaff_server.status_page.notice_board import NoticeBoard
from flagstaff_server.status_page.peer_watch import OwnStatus, PeerWatch

log = logging.getLogger(__name__)

CACHE_SECONDS = 1.0


@dataclass(slots=True)
class _Cached:
    built: float = float("-inf")
    revision: int = -1
    rounds: int = -1
    value: Any = None


@dataclass(slots=True, kw_only=True)
class StatusSite:
    own_status: OwnStatus
    role: str
    version: str
    node: DeliveryNode | None = None
    """The node whose feed brings notice changes and whose persister keeps the board (beside
    its snapshots, never older than its feed position); None: notices in memory only."""
    peers: tuple[str, ...] = ()
    notice_feeds: tuple[str, ...] = ()
    """Upstream status feeds whose notices this node shows too (a relay's upstream)."""
    stored_notices: Callable[[], list[Notice]] | None = None
    """Blocking read of the notices in the database, tried once at start (a node whose board
    file was lost still shows them); failures are logged and ignored."""
    directory: Path | None = None
    """Where the board and the peers' readings are kept (`<data dir>/status`)."""
    poll_seconds: float = 2.0
    cache_seconds: float = CACHE_SECONDS
    wall: Callable[[], float] = time.time
    clock: Callable[[], float] = time.monotonic
    board: NoticeBoard = field(default_factory=NoticeBoard)
    watch: PeerWatch = field(init=False)
    _feed: _Cached = field(default_factory=_Cached)
    _page: _Cached = field(default_factory=_Cached)
    _saved_revision: int = 0

    def __post_init__(self) -> None:
        self.watch = PeerWatch(
            own_status=self.own_status,
            peers=self.peers,
            notice_feeds=self.notice_feeds,
            on_notices=self.take_upstream_notices,
            interval_seconds=self.poll_seconds,
            timeout_seconds=min(2.0, self.poll_seconds),
            directory=self.directory,
            wall=self.wall,
        )
        if self.node is not None:
            # registered before the node starts: the board loads with its snapshots, before
            # the feed is read, and is written before them
            self.node.side_readers.append(self.take_change)
            if self.directory is not None:
                self.node.loaders.append(self._load_board)
                self.node.pre_writers.append(self._collect_board)

    # lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """After the node started."""
        if self.stored_notices is not None:
            await self._read_stored()
        await self.watch.start()

    async def stop(self) -> None:
        await self.watch.stop()

    async def _read_stored(self) -> None:
        assert self.stored_notices is not None
        try:
            async with asyncio.timeout(5.0):
                stored = await asyncio.to_thread(self.stored_notices)
        except Exception as exc:
            log.info("status page: notices not read from the database at start: %s", exc)
            return
        # changes after the node's position replay on top, in order, so the feed's latest word
        # on each notice wins
        for notice in stored:
            self.board.put("feed", notice)
        self._changed()

    # notices -----------------------------------------------------------------------------------

    def take_change(self, change: Change) -> None:
        """A feed change of kind "notice" (the delivery node's side reader; the node's
        persister runs after each change anyway)."""
        if change.kind == "notice":
            self.board.apply_change(change)

    def take_upstream_notices(self, notices: list[Notice]) -> None:
        revision = self.board.revision
        self.board.replace("upstream", notices)
        if self.board.revision != revision:
            self._changed()

    def _changed(self) -> None:
        if self.node is not None:
            self.node.mark_changed()

    def _load_board(self) -> None:
        assert self.directory is not None
        self.board.load(self.directory)
        self._saved_revision = self.board.revision

    def _collect_board(self) -> Callable[[], None] | None:
        """The node's pre-writer: the board's file write when it changed since the last."""
        if self.directory is None or self.board.revision == self._saved_revision:
            return None
        revision, content, directory = self.board.revision, self.board.encode(), self.directory

        def write() -> None:
            notice_board.write_file(directory, content)
            self._saved_revision = max(self._saved_revision, revision)

        return write

    # the feed and the page ---------------------------------------------------------------------

    def feed(self) -> dict[str, Any]:
        cached = self._feed
        if self._fresh(cached):
            document: dict[str, Any] = cached.value
            return document
        now_ms = int(self.wall() * 1000)
        own = self.watch.readings[SELF].body
        node = NodeInfo(
            role=self.role,
            region=region_of(own) if own is not None else "local",
            version=self.version,
        )
        document = build_feed(
            node=node,
            readings=self.watch.readings.values(),
            notices=self.board.active(now_ms),
            now_ms=now_ms,
        )
        self._remember(cached, document)
        return document

    def page(self) -> bytes:
        cached = self._page
        if not self._fresh(cached):
            self._remember(cached, page_html.render(self.feed()))
        body: bytes = cached.value
        return body

    def _fresh(self, cached: _Cached) -> bool:
        return (
            cached.value is not None
            and cached.revision == self.board.revision
            and cached.rounds == self.watch.rounds
            and self.clock() - cached.built < self.cache_seconds
        )

    def _remember(self, cached: _Cached, value: Any) -> None:
        cached.value = value
        cached.built = self.clock()
        cached.revision = self.board.revision
        cached.rounds = self.watch.rounds
