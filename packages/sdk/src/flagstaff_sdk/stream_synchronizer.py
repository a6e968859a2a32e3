"""The streaming synchronizer: one stream at a time to the best region, reconnecting with backoff
for as long as the client runs, switching a region to FDv1 when it asks, and reconnecting at once
when the poller's probe finds a better region answering. Runs on the actor's loop; never gives up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import httpx

from flagstaff_sdk.backoff import Backoff
from flagstaff_sdk.change_set import ChangeSet
from flagstaff_sdk.config import Config
from flagstaff_sdk.errors import FallbackToFdv1, SourceError
from flagstaff_sdk.network import StreamEvents, read_stream
from flagstaff_sdk.pause import Pause
from flagstaff_sdk.region import Region, RegionSet
from flagstaff_sdk.status_board import StatusBoard

log = logging.getLogger("flagstaff_sdk")

StreamInitReporter = Callable[[int, int, bool], None]
"""`(started_epoch_ms, duration_ms, failed)` of one stream attempt (diagnostic `streamInits`)."""


class StreamSynchronizer:
    """`run(client)` streams until cancelled; setting `switch` drops the stream and reconnects
    to the region `regions.pick()` names then."""

    def __init__(
        self,
        config: Config,
        board: StatusBoard,
        regions: RegionSet,
        headers: dict[str, str],
        pause: Pause,
        *,
        switch: asyncio.Event,
        report_init: StreamInitReporter | None,
    ) -> None:
        self._config = config
        self._board = board
        self._regions = regions
        self._headers = headers
        self._pause = pause
        self._switch = switch
        self._report_init = report_init
        self._clock = config.clock

    def _stream_init(self, started_wall: float, started: float, *, failed: bool) -> None:
        reporter = self._report_init
        if reporter is None:
            return
        duration_ms = int((self._clock.monotonic() - started) * 1000)
        try:
            reporter(int(started_wall * 1000), max(0, duration_ms), failed)
        except Exception:
            # diagnostics must never disturb the stream
            log.exception("reporting a stream init failed")

    async def run(self, client: httpx.AsyncClient) -> None:
        config, board, regions, clock = self._config, self._board, self._regions, self._clock
        backoff = Backoff(config.timing, clock, config.random)
        auto = config.protocol == "auto"
        while True:
            region = regions.pick()
            healthy = False
            started_wall, started = clock.wall(), clock.monotonic()

            def apply(
                change: ChangeSet,
                region: Region = region,
                started_wall: float = started_wall,
                started: float = started,
            ) -> None:
                nonlocal healthy
                # status first: whoever sees the new data also sees a VALID status
                if not healthy:
                    healthy = True
                    self._stream_init(started_wall, started, failed=False)
                    backoff.healthy()
                    regions.succeeded(region)
                    board.set_stream_valid(True, region)
                board.apply_network(change, region)

            events = StreamEvents(
                apply=apply,
                retry_hint=backoff.set_base,
                selector=lambda: board.store.holding.selector,
            )
            self._switch.clear()
            attempt = asyncio.create_task(
                read_stream(
                    client,
                    region,
                    self._headers,
                    events,
                    auto=auto,
                    now=clock.monotonic,
                    wall=clock.wall,
                )
            )
            switch = asyncio.create_task(self._switch.wait())
            try:
                await asyncio.wait({attempt, switch}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                switch.cancel()
                if not attempt.done():  # switching regions, or the client is closing
                    attempt.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await attempt
            if attempt.cancelled():
                board.set_stream_valid(False, region)
                continue  # a better region is back: reconnect there at once
            error = attempt.exception()
            board.set_stream_valid(False, region)
            if isinstance(error, FallbackToFdv1):
                region.fdv1 = True
                region.poll_etag = None
                log.info("%s asked for FDv1; using it from now on", region.name)
                continue
            if error is None or not isinstance(error, Exception):
                error = SourceError("the stream ended")
            if not healthy:
                self._stream_init(started_wall, started, failed=True)
                regions.failed(region)
            delay = backoff.delay_after(error)
            board.record_error(error)
            if regions.pick() is not region:
                delay = min(delay, config.timing.initial_retry_delay)
            await self._pause(delay, self._switch)
