"""The network actor: one asyncio loop in one background thread owns every data source, the
endpoint choice, the status and the disk-cache writer. Clients only read the Store.

Chain: initializers (disk cache, data files) load before the loop starts; then synchronizers:
streaming first, polling alongside once streaming has not been VALID for a while, back to
streaming only when a stream works again. Failures are caught, recorded and backed off at the
top of each loop, nowhere else; nothing here ever gives up. This module starts and stops the
parts: `initializers`, `stream_synchronizer`, `poll_synchronizer`, `cache_writer`,
`source_sink`, all reporting to one `status_board`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading

import httpx

from flagstaff_sdk.cache_writer import CacheWriter
from flagstaff_sdk.config import USER_AGENT, Config
from flagstaff_sdk.data_file import FileSource
from flagstaff_sdk.initializers import initialize
from flagstaff_sdk.notifier import Notifier
from flagstaff_sdk.pause import Pause
from flagstaff_sdk.poll_synchronizer import PollSynchronizer
from flagstaff_sdk.region import RegionSet
from flagstaff_sdk.source import DataSource
from flagstaff_sdk.source_sink import SourceSink
from flagstaff_sdk.status import DataSourceState, DataSourceStatus
from flagstaff_sdk.status_board import StatusBoard
from flagstaff_sdk.store import Store
from flagstaff_sdk.stream_synchronizer import StreamInitReporter, StreamSynchronizer


class DataSystem:
    """Starts with `start()`, stops with `stop()`; `settled` is set once the first network
    answer arrived or every endpoint failed once (the client stops waiting then)."""

    def __init__(self, config: Config, store: Store, notifier: Notifier) -> None:
        self.config = config
        self.store = store
        self.clock = config.clock
        timing = config.timing
        self.regions = RegionSet(
            config.endpoints,
            fdv1=config.protocol == "fdv1",
            threshold=timing.failover_after_failures,
        )
        self.headers = config.headers(USER_AGENT)
        self._stop_requested = threading.Event()
        self._custom: DataSource | None = config.data_source
        self._file_source: FileSource | None = None
        if config.data_files:
            self._file_source = FileSource(
                config.data_files,
                auto_reload=config.auto_reload,
                interval=timing.file_reload_interval,
            )
        replacing = self._custom.name if self._custom is not None else None
        if replacing is None and self._file_source is not None:
            replacing = "file"
        self._board = StatusBoard(
            store,
            notifier,
            self.clock,
            self.regions,
            replacing=replacing,
            offline=config.offline and replacing is None,
        )
        self.settled = self._board.settled
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping: asyncio.Event | None = None
        self._cache_revision = -1
        self._stream_init_reporter: StreamInitReporter | None = None

    @property
    def status(self) -> DataSourceStatus:
        return self._board.status

    def report_stream_inits(self, reporter: StreamInitReporter | None) -> None:
        """`reporter(started_ms, duration_ms, failed)` after each stream attempt that became
        healthy or failed (for diagnostic `streamInits`); call before `start()`."""
        self._stream_init_reporter = reporter

    def initialize(self) -> None:
        """Load local data at once: data files; else the disk cache, else the bootstrap file."""
        self._cache_revision = initialize(
            self.config, self._board, self._file_source, reads_cache=self._custom is None
        )

    # lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        if self.config.offline and self._file_source is None and self._custom is None:
            self.settled.set()
            return
        self._thread = threading.Thread(target=self._run_loop, name="flagstaff-sdk", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        # The flag covers a stop before the loop exists; the callback one while it runs.
        self._stop_requested.set()
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already finished
                loop.call_soon_threadsafe(self._on_stop)
        if self._thread is not None:
            self._thread.join(timeout)
        self._board.set_state(DataSourceState.OFF)

    def _cache_writer(self) -> CacheWriter | None:
        """Only network data is cached: files and custom sources have their own origin."""
        cache_dir = self.config.cache_dir
        if cache_dir is None or self._file_source is not None or self._custom is not None:
            return None
        return CacheWriter(
            cache_dir, self.config.sdk_key, self.store, self.clock, revision=self._cache_revision
        )

    def _on_stop(self) -> None:
        if self._stopping is not None:
            self._stopping.set()

    def _run_loop(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()

    async def _main(self) -> None:
        self._stopping = asyncio.Event()
        if self._stop_requested.is_set():
            return
        pause = Pause(self._stopping)
        writer = self._cache_writer()
        if writer is not None:
            writer.watch()
        timing = self.config.timing
        connect = timing.connect_timeout
        # one TLS context for both clients: building one costs a noticeable fraction of a second
        tls = await asyncio.to_thread(ssl.create_default_context)
        transport = self.config.http_transport
        stream_client = httpx.AsyncClient(
            verify=tls,
            transport=transport,
            timeout=httpx.Timeout(
                connect, read=timing.stream_read_timeout, write=connect, pool=connect
            ),
            trust_env=False,
        )
        poll_client = httpx.AsyncClient(
            verify=tls,
            transport=transport,
            timeout=httpx.Timeout(connect, read=timing.read_timeout, write=connect, pool=connect),
            trust_env=False,
        )
        tasks: list[asyncio.Task[None]] = []
        # the grace period before polling alongside starts when streaming can first be tried
        self._board.stream_down_since = self.clock.monotonic()
        try:
            replacement = self._custom if self._custom is not None else self._file_source
            if replacement is not None:
                sink = SourceSink(self._board, asyncio.get_running_loop())
                tasks.append(asyncio.create_task(replacement.run(sink)))
            else:
                tasks.extend(self._synchronizers(pause, stream_client, poll_client))
            if writer is not None:
                tasks.append(asyncio.create_task(writer.run(pause, timing.cache_write_delay)))
            await self._stopping.wait()
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await stream_client.aclose()
            await poll_client.aclose()
            if writer is not None:
                await writer.write()

    def _synchronizers(
        self, pause: Pause, stream_client: httpx.AsyncClient, poll_client: httpx.AsyncClient
    ) -> list[asyncio.Task[None]]:
        poller = PollSynchronizer(self.config, self._board, self.regions, self.headers, pause)
        tasks = []
        if self.config.stream:
            switch = asyncio.Event()
            streamer = StreamSynchronizer(
                self.config,
                self._board,
                self.regions,
                self.headers,
                pause,
                switch=switch,
                report_init=self._stream_init_reporter,
            )
            tasks.append(asyncio.create_task(streamer.run(stream_client)))
            tasks.append(asyncio.create_task(poller.probe(poll_client, switch)))
        tasks.append(asyncio.create_task(poller.run(poll_client)))
        return tasks
