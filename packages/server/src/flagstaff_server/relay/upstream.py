"""One environment's upstream connection: the Flagstaff SDK's data-source chain (streaming with
automatic fallback to polling, failover across the upstream regions) running in its own thread,
telling the relay's event loop whenever the data it holds changed.

Owns the SDK objects; must not touch delivery state (the relay reads `data` on its own loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable

from flagstaff_core import FlagData
from flagstaff_sdk.config import Config, Endpoint, Timing
from flagstaff_sdk.data_system import DataSystem
from flagstaff_sdk.notifier import Notifier
from flagstaff_sdk.status import DataSourceStatus
from flagstaff_sdk.store import Store

WRAPPER = "FlagstaffRelay/0.1.0"
"""Sent as `X-LaunchDarkly-Wrapper`, so upstream logs tell relays from applications."""


class Upstream:
    def __init__(
        self,
        *,
        sdk_key: str,
        urls: tuple[str, ...],
        stream_urls: tuple[str, ...] = (),
        stream: bool,
        protocol: str,
        timing: dict[str, float],
        loop: asyncio.AbstractEventLoop,
        on_change: Callable[[], None],
    ) -> None:
        fields = {f.name for f in dataclasses.fields(Timing)}
        unknown = sorted(set(timing) - fields)
        if unknown:
            raise ValueError(f"unknown upstream_timing settings: {', '.join(unknown)}")
        config = Config(
            sdk_key,
            endpoints=tuple(
                Endpoint(stream_uri=stream, poll_uri=url, events_uri=url)
                for url, stream in zip(urls, stream_urls or urls, strict=True)
            ),
            stream=stream,
            protocol=protocol,  # type: ignore[arg-type]
            send_events=False,
            wrapper=WRAPPER,
            timing=Timing(**timing),  # type: ignore[arg-type]
        )
        self._loop = loop
        self._on_change = on_change
        self._notifier = Notifier()
        self.store = Store(config.clock, self._notifier)
        self.system = DataSystem(config, self.store, self._notifier)
        self.store.watch(self._changed)

    def _changed(self) -> None:
        # called on the SDK's thread after every change: hop to the relay's loop
        with contextlib.suppress(RuntimeError):  # the loop closed during shutdown
            self._loop.call_soon_threadsafe(self._on_change)

    def start(self) -> None:
        self.system.initialize()
        self.system.start()

    def stop(self) -> None:
        """Blocking (joins the SDK thread): call in a worker thread."""
        self.system.stop()
        self._notifier.close()

    @property
    def data(self) -> FlagData | None:
        """The data upstream sent, merged; None before its first answer."""
        return self.store.data

    @property
    def status(self) -> DataSourceStatus:
        return self.system.status

    def data_age(self, now: float) -> float | None:
        """Seconds since upstream last confirmed the data (monotonic `now`)."""
        confirmed = self.store.confirmed_at
        return None if confirmed is None else max(0.0, now - confirmed)
