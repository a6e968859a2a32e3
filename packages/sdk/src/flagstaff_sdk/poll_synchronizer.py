"""The polling synchronizer: the chain's polling initializer, then polling alongside the stream
while no stream is VALID, failing over across regions each round; and the probe that, while
streaming from a fallback region, polls the better ones and asks the stream to move back.
Runs on the actor's loop; never gives up.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import httpx

from flagstaff_sdk.backoff import Backoff
from flagstaff_sdk.config import Config
from flagstaff_sdk.errors import FallbackToFdv1, SourceError
from flagstaff_sdk.network import poll
from flagstaff_sdk.pause import Pause
from flagstaff_sdk.region import Region, RegionSet
from flagstaff_sdk.status_board import StatusBoard


class PollSynchronizer:
    def __init__(
        self,
        config: Config,
        board: StatusBoard,
        regions: RegionSet,
        headers: dict[str, str],
        pause: Pause,
    ) -> None:
        self._config = config
        self._board = board
        self._regions = regions
        self._headers = headers
        self._pause = pause
        self._clock = config.clock

    def _should_poll(self) -> float:
        """Seconds until polling should run (0: now); inf while a stream is VALID.

        Before any stream was VALID the poller is the chain's polling initializer and starts
        after `initial_poll_after`; later it waits `poll_fallback_after` of stream trouble."""
        if not self._config.stream:
            return 0.0
        board = self._board
        if board.stream_valid:
            return float("inf")
        timing = self._config.timing
        grace = timing.poll_fallback_after if board.stream_ever_valid else timing.initial_poll_after
        waited = self._clock.monotonic() - board.stream_down_since
        return max(0.0, grace - waited)

    async def run(self, client: httpx.AsyncClient) -> None:
        timing = self._config.timing
        board = self._board
        backoff = Backoff(
            replace(timing, max_retry_delay=max(timing.poll_interval, timing.initial_retry_delay)),
            self._clock,
            self._config.random,
        )
        while True:
            wait = self._should_poll()
            if wait > 0:
                board.set_polling(False)
                await self._pause(wait if wait != float("inf") else 3600.0, board.changed)
                continue
            board.set_polling(True)
            error = await self._poll_round(client)
            if error is None:
                backoff.healthy()
                delay = timing.poll_interval
            else:
                delay = backoff.delay_after(error)
            await self._pause(delay, board.changed)

    async def _poll_round(self, client: httpx.AsyncClient) -> Exception | None:
        """Poll the best region, failing over to the others; the last error when all failed."""
        last: Exception | None = None
        for region in self._regions.in_poll_order():
            error = await self._poll_region(client, region)
            if error is None:
                self._board.poll_round_ended(region)
                return None
            last = error
        self._board.poll_round_ended(None)
        return last

    async def _poll_region(self, client: httpx.AsyncClient, region: Region) -> Exception | None:
        auto = self._config.protocol == "auto"
        board, regions = self._board, self._regions
        for _ in range(2):  # a second time only after switching this region to FDv1
            try:
                change = await poll(
                    client,
                    region,
                    self._headers,
                    board.store.holding.selector,
                    auto=auto,
                    now=self._clock.monotonic,
                    wall=self._clock.wall,
                )
            except FallbackToFdv1:
                region.fdv1 = True
                region.poll_etag = None
                continue
            except Exception as exc:
                regions.failed(region)
                board.record_error(exc)
                return exc
            regions.succeeded(region)
            board.confirm_poll()
            if change is None:
                board.store.confirm()
                board.network_answered()
            else:
                board.apply_network(change, region)
            return None
        return SourceError("FDv1 fallback loop")

    async def probe(self, client: httpx.AsyncClient, switch: asyncio.Event) -> None:
        """While streaming from a fallback region, poll the better ones now and then; when one
        answers, set `switch` so the stream reconnects there."""
        board = self._board
        while True:
            await self._pause(self._config.timing.probe_interval)
            current = board.network_region
            if current is None or not board.stream_valid:
                continue
            for region in self._regions.better_than(current):
                if await self._poll_region(client, region) is None:
                    switch.set()
                    break
