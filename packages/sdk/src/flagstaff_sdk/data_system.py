"""The network actor: one asyncio loop in one background thread owns every data source, the
endpoint choice, the status and the disk-cache writer. Clients only read the Store.

Chain: initializers (disk cache, data files) load before the loop starts; then synchronizers:
streaming first, polling alongside once streaming has not been VALID for a while, back to
streaming only when a stream works again. Failures are caught, recorded and backed off at the
top of each loop, nowhere else; nothing here ever gives up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import httpx
from flagstaff_core import FlagData

from flagstaff_sdk.backoff import Backoff
from flagstaff_sdk.cache import cache_path, read_cache, write_cache
from flagstaff_sdk.change_set import ChangeSet
from flagstaff_sdk.config import USER_AGENT, Config
from flagstaff_sdk.data_file import FileSource
from flagstaff_sdk.errors import (
    DataFileError,
    FallbackToFdv1,
    HttpStatusError,
    PayloadError,
    SourceError,
)
from flagstaff_sdk.merge import Holding
from flagstaff_sdk.network import StreamEvents, poll, read_stream
from flagstaff_sdk.notifier import Notifier
from flagstaff_sdk.region import Region, RegionSet
from flagstaff_sdk.source import DataSource
from flagstaff_sdk.status import DataSourceState, DataSourceStatus, ErrorInfo
from flagstaff_sdk.store import Store

log = logging.getLogger("flagstaff_sdk")

StreamInitReporter = Callable[[int, int, bool], None]
"""`(started_epoch_ms, duration_ms, failed)` of one stream attempt (diagnostic `streamInits`)."""


def error_info(exc: BaseException, at: float) -> ErrorInfo:
    if isinstance(exc, HttpStatusError):
        return ErrorInfo(kind="http", message=str(exc), status=exc.status, at=at)
    if isinstance(exc, httpx.TimeoutException):
        return ErrorInfo(kind="timeout", message=type(exc).__name__, at=at)
    if isinstance(exc, httpx.TransportError):
        return ErrorInfo(kind="network", message=f"{type(exc).__name__}: {exc}", at=at)
    if isinstance(exc, PayloadError):
        return ErrorInfo(kind="payload", message=str(exc), at=at)
    return ErrorInfo(kind="source", message=f"{type(exc).__name__}: {exc}", at=at)


class DataSystem:
    """Starts with `start()`, stops with `stop()`; `settled` is set once the first network
    answer arrived or every endpoint failed once (the client stops waiting then)."""

    def __init__(self, config: Config, store: Store, notifier: Notifier) -> None:
        self.config = config
        self.store = store
        self.notifier = notifier
        self.clock = config.clock
        timing = config.timing
        self.regions = RegionSet(
            config.endpoints,
            fdv1=config.protocol == "fdv1",
            threshold=timing.failover_after_failures,
        )
        self.settled = threading.Event()
        self._stop_requested = threading.Event()
        self.headers = config.headers(USER_AGENT)
        self._lock = threading.Lock()
        self._status = DataSourceStatus(state=DataSourceState.INITIALIZING, since=self.clock.wall())
        self._last_error: ErrorInfo | None = None
        self._stream_valid = False
        self._stream_ever_valid = False
        self._stream_down_since = self.clock.monotonic()
        self._polling = False
        self._poll_valid = False
        self._source_valid = False
        self._network_region: Region | None = None
        self._unauthorized = False
        self._offline_source: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping: asyncio.Event | None = None
        self._changed: asyncio.Event | None = None
        self._switch: asyncio.Event | None = None
        self._cache_dirty: asyncio.Event | None = None
        self._cache_revision = -1
        self._custom: DataSource | None = config.data_source
        self._stream_init_reporter: StreamInitReporter | None = None
        self._file_source: FileSource | None = None
        if config.data_files:
            self._file_source = FileSource(
                config.data_files,
                auto_reload=config.auto_reload,
                interval=timing.file_reload_interval,
            )

    def report_stream_inits(self, reporter: StreamInitReporter | None) -> None:
        """`reporter(started_ms, duration_ms, failed)` after each stream attempt that became
        healthy or failed (for diagnostic `streamInits`); call before `start()`."""
        self._stream_init_reporter = reporter

    def _stream_init(self, started_wall: float, started: float, *, failed: bool) -> None:
        reporter = self._stream_init_reporter
        if reporter is None:
            return
        duration_ms = int((self.clock.monotonic() - started) * 1000)
        try:
            reporter(int(started_wall * 1000), max(0, duration_ms), failed)
        except Exception:
            # diagnostics must never disturb the stream
            log.exception("reporting a stream init failed")

    # initializers (synchronous, before the loop) -----------------------------------------------

    def initialize(self) -> None:
        """Load local data at once: data files; else the disk cache, else the bootstrap file."""
        if self._file_source is not None:
            try:
                self.store.apply(self._file_source.load())
                self._source_valid = True
                self._offline_source = "file"
            except DataFileError as exc:
                self._last_error = ErrorInfo(kind="file", message=str(exc), at=self.clock.wall())
        elif self.config.cache_dir is not None and self._custom is None:
            try:
                cached = read_cache(cache_path(self.config.cache_dir, self.config.sdk_key))
            except DataFileError as exc:
                log.warning("ignoring the disk cache: %s", exc)
                cached = None
            if cached is not None:
                age = max(0.0, self.clock.wall() - cached.saved_at)
                self.store.load(cached.holding, self.clock.monotonic() - age)
                self._cache_revision = self.store.revision
        if self.store.data is None and self.config.bootstrap_file is not None:
            self._bootstrap(self.config.bootstrap_file)
        if self.config.offline and self._file_source is None and self._custom is None:
            self._offline_source = "offline"
        self._refresh_status()

    def _bootstrap(self, path: Path) -> None:
        try:
            change = FileSource([path]).load()
            saved_at = path.stat().st_mtime
        except (DataFileError, OSError) as exc:
            log.warning("ignoring the bootstrap file: %s", exc)
            self._last_error = ErrorInfo(kind="file", message=str(exc), at=self.clock.wall())
            return
        learned_at = {("flag", key): float("-inf") for key in change.flags}
        learned_at.update({("segment", key): float("-inf") for key in change.segments})
        data = FlagData(flags=change.flags, segments=change.segments)
        age = max(0.0, self.clock.wall() - saved_at)
        self.store.load(Holding(data=data, learned_at=learned_at), self.clock.monotonic() - age)

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
        self._set_status(DataSourceState.OFF)

    @property
    def _writes_cache(self) -> bool:
        """Only network data is cached: files and custom sources have their own origin."""
        return (
            self.config.cache_dir is not None and self._file_source is None and self._custom is None
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
        self._changed = asyncio.Event()
        self._switch = asyncio.Event()
        self._cache_dirty = asyncio.Event()
        loop = asyncio.get_running_loop()
        cache_dirty = self._cache_dirty

        def mark_dirty() -> None:
            with contextlib.suppress(RuntimeError):  # a change arriving after close
                loop.call_soon_threadsafe(cache_dirty.set)

        self.store.watch(mark_dirty)
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
        self._stream_down_since = self.clock.monotonic()
        try:
            if self._custom is not None:
                tasks.append(asyncio.create_task(self._run_source(self._custom)))
            elif self._file_source is not None:
                tasks.append(asyncio.create_task(self._run_source(self._file_source)))
            else:
                if self.config.stream:
                    tasks.append(asyncio.create_task(self._stream_loop(stream_client)))
                    tasks.append(asyncio.create_task(self._probe_loop(poll_client)))
                tasks.append(asyncio.create_task(self._poll_loop(poll_client)))
            if self._writes_cache:
                tasks.append(asyncio.create_task(self._cache_loop()))
            await self._stopping.wait()
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await stream_client.aclose()
            await poll_client.aclose()
            if self._writes_cache:
                await self._write_cache()

    async def _wait(self, seconds: float, *events: asyncio.Event) -> None:
        """Wait `seconds`, or less when the client stops or one of `events` is set."""
        assert self._stopping is not None
        waiters = [asyncio.ensure_future(e.wait()) for e in (self._stopping, *events)]
        try:
            await asyncio.wait(waiters, timeout=max(seconds, 0.0))
        finally:
            for waiter in waiters:
                waiter.cancel()

    def _signal(self) -> None:
        changed = self._changed
        if changed is not None:
            changed.set()
            self._changed = asyncio.Event()

    # custom and file sources -------------------------------------------------------------------

    async def _run_source(self, source: DataSource) -> None:
        await source.run(_SourceSink(self, asyncio.get_running_loop(), source.name))

    # streaming ---------------------------------------------------------------------------------

    async def _stream_loop(self, client: httpx.AsyncClient) -> None:
        backoff = Backoff(self.config.timing, self.clock, self.config.random)
        auto = self.config.protocol == "auto"
        assert self._switch is not None
        while True:
            region = self.regions.pick()
            healthy = False
            started_wall, started = self.clock.wall(), self.clock.monotonic()

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
                    self.regions.succeeded(region)
                    self._set_stream_valid(True, region)
                self._apply_network(change, region)

            events = StreamEvents(
                apply=apply,
                retry_hint=backoff.set_base,
                selector=lambda: self.store.holding.selector,
            )
            self._switch.clear()
            attempt = asyncio.create_task(
                read_stream(
                    client,
                    region,
                    self.headers,
                    events,
                    auto=auto,
                    now=self.clock.monotonic,
                    wall=self.clock.wall,
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
                self._set_stream_valid(False, region)
                continue  # a better region is back: reconnect there at once
            error = attempt.exception()
            self._set_stream_valid(False, region)
            if isinstance(error, FallbackToFdv1):
                region.fdv1 = True
                region.poll_etag = None
                log.info("%s asked for FDv1; using it from now on", region.name)
                continue
            if error is None or not isinstance(error, Exception):
                error = SourceError("the stream ended")
            if not healthy:
                self._stream_init(started_wall, started, failed=True)
                self.regions.failed(region)
            delay = self._failure_delay(error, backoff)
            self._record_error(error)
            if self.regions.pick() is not region:
                delay = min(delay, self.config.timing.initial_retry_delay)
            await self._wait(delay, self._switch)

    def _failure_delay(self, error: BaseException, backoff: Backoff) -> float:
        if isinstance(error, HttpStatusError):
            return backoff.delay(unexpected=not error.recoverable, retry_after=error.retry_after)
        return backoff.delay()

    def _set_stream_valid(self, valid: bool, region: Region) -> None:
        if valid == self._stream_valid:
            return
        self._stream_valid = valid
        if valid:
            self._stream_ever_valid = True
            self._network_region = region
        else:
            self._stream_down_since = self.clock.monotonic()
        self._signal()
        self._refresh_status()

    # polling -----------------------------------------------------------------------------------

    def _should_poll(self) -> float:
        """Seconds until polling should run (0: now); inf while a stream is VALID.

        Before any stream was VALID the poller is the chain's polling initializer and starts
        after `initial_poll_after`; later it waits `poll_fallback_after` of stream trouble."""
        if not self.config.stream:
            return 0.0
        if self._stream_valid:
            return float("inf")
        timing = self.config.timing
        grace = timing.poll_fallback_after if self._stream_ever_valid else timing.initial_poll_after
        waited = self.clock.monotonic() - self._stream_down_since
        return max(0.0, grace - waited)

    async def _poll_loop(self, client: httpx.AsyncClient) -> None:
        timing = self.config.timing
        backoff = Backoff(
            replace(timing, max_retry_delay=max(timing.poll_interval, timing.initial_retry_delay)),
            self.clock,
            self.config.random,
        )
        while True:
            wait = self._should_poll()
            if wait > 0:
                if self._polling:
                    self._polling = False
                    self._poll_valid = False
                    self._refresh_status()
                assert self._changed is not None
                await self._wait(wait if wait != float("inf") else 3600.0, self._changed)
                continue
            if not self._polling:
                self._polling = True
                self._refresh_status()
            error = await self._poll_round(client)
            if error is None:
                backoff.healthy()
                delay = timing.poll_interval
            else:
                delay = self._failure_delay(error, backoff)
            assert self._changed is not None
            await self._wait(delay, self._changed)

    async def _poll_round(self, client: httpx.AsyncClient) -> Exception | None:
        """Poll the best region, failing over to the others; the last error when all failed."""
        last: Exception | None = None
        for region in self.regions.in_poll_order():
            error = await self._poll_region(client, region)
            if error is None:
                self._poll_valid = True
                self._network_region = region
                self._refresh_status()
                return None
            last = error
        self._poll_valid = False
        self._refresh_status()
        return last

    async def _poll_region(self, client: httpx.AsyncClient, region: Region) -> Exception | None:
        auto = self.config.protocol == "auto"
        for _ in range(2):  # a second time only after switching this region to FDv1
            try:
                change = await poll(
                    client,
                    region,
                    self.headers,
                    self.store.holding.selector,
                    auto=auto,
                    now=self.clock.monotonic,
                    wall=self.clock.wall,
                )
            except FallbackToFdv1:
                region.fdv1 = True
                region.poll_etag = None
                continue
            except Exception as exc:
                self.regions.failed(region)
                self._record_error(exc)
                return exc
            self.regions.succeeded(region)
            if self._polling:
                self._poll_valid = True  # before the data, as for streams
            if change is None:
                self.store.confirm()
                self._network_answered()
            else:
                self._apply_network(change, region)
            return None
        return SourceError("FDv1 fallback loop")

    async def _probe_loop(self, client: httpx.AsyncClient) -> None:
        """While streaming from a fallback region, poll the better ones now and then; when one
        answers, reconnect the stream there."""
        assert self._switch is not None
        while True:
            await self._wait(self.config.timing.probe_interval)
            current = self._network_region
            if current is None or not self._stream_valid:
                continue
            for region in self.regions.better_than(current):
                if await self._poll_region(client, region) is None:
                    self._switch.set()
                    break

    # applying data and status ------------------------------------------------------------------

    def _apply_network(self, change: ChangeSet, region: Region) -> None:
        self.store.apply(change)
        self._network_region = region
        self._network_answered()

    # Each of these refreshes the status before releasing a waiting constructor, so the first
    # status a caller reads already reflects what released it.

    def _network_answered(self) -> None:
        self._unauthorized = False
        self._refresh_status()
        self.settled.set()

    def _record_error(self, error: BaseException) -> None:
        info = error_info(error, self.clock.wall())
        self._last_error = info
        self._unauthorized = info.status in (401, 403)
        log.warning("Flagstaff data source error: %s", info.message)
        self._refresh_status()
        if self.regions.all_tried_and_failing or self._unauthorized:
            self.settled.set()

    def source_applied(self, change: ChangeSet) -> None:
        self.store.apply(change)
        self._refresh_status()
        self.settled.set()

    def source_valid(self, valid: bool, error: ErrorInfo | None = None) -> None:
        self._source_valid = valid
        if error is not None:
            self._last_error = error
        self._refresh_status()
        self.settled.set()

    @property
    def status(self) -> DataSourceStatus:
        return self._status

    def _refresh_status(self) -> None:
        if self._offline_source == "offline":
            state = DataSourceState.OFF
            source = "cache" if self.store.data is not None else "none"
        elif self._custom is not None or self._file_source is not None:
            source = self._custom.name if self._custom is not None else "file"
            if self._source_valid:
                state = DataSourceState.VALID
            elif self.store.data is not None:
                state = DataSourceState.INTERRUPTED
            else:
                state = DataSourceState.INITIALIZING
        else:
            valid = self._stream_valid or (self._polling and self._poll_valid)
            if self._stream_valid and self._polling:
                source = "stream+poll"
            elif self._stream_valid:
                source = "stream"
            elif self._polling and self._poll_valid:
                source = "poll"
            elif self.store.data is not None:
                source = "cache" if self._network_region is None else "stale"
            else:
                source = "none"
            if valid:
                state = DataSourceState.VALID
            elif self._unauthorized:
                state = DataSourceState.OFF
            elif self.store.data is not None:
                state = DataSourceState.INTERRUPTED
            else:
                state = DataSourceState.INITIALIZING
        self._set_status(state, source)

    def _set_status(self, state: DataSourceState, source: str | None = None) -> None:
        with self._lock:
            old = self._status
            region = self._network_region
            status = DataSourceStatus(
                state=state,
                since=old.since if old.state is state else self.clock.wall(),
                last_error=self._last_error,
                source=old.source if source is None else source,
                endpoint=None if region is None else region.name,
            )
            if status == old:
                return
            self._status = status
        if status.state is not old.state or status.source != old.source:
            self.notifier.status_changed(status)

    # disk cache --------------------------------------------------------------------------------

    async def _cache_loop(self) -> None:
        assert self._cache_dirty is not None
        while True:
            await self._cache_dirty.wait()
            await self._wait(self.config.timing.cache_write_delay)
            self._cache_dirty.clear()
            await self._write_cache()

    async def _write_cache(self) -> None:
        cache_dir = self.config.cache_dir
        store = self.store
        if cache_dir is None or store.data is None or store.revision == self._cache_revision:
            return
        revision = store.revision
        holding = store.holding
        try:
            await asyncio.to_thread(
                write_cache,
                cache_path(cache_dir, self.config.sdk_key),
                holding,
                self.clock.wall(),
            )
        except OSError as exc:
            log.warning("could not write the Flagstaff disk cache: %s", exc)
            return
        self._cache_revision = revision


class _SourceSink:
    """The DataSink handed to custom and file sources; callable from any thread."""

    def __init__(self, system: DataSystem, loop: asyncio.AbstractEventLoop, name: str) -> None:
        self._system = system
        self._loop = loop
        self._name = name

    def _on_loop(self, fn: Callable[[], None]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            fn()
        else:
            with contextlib.suppress(RuntimeError):  # the client closed meanwhile
                self._loop.call_soon_threadsafe(fn)

    def apply(self, change: ChangeSet) -> None:
        # data goes in synchronously (a test's update is visible when `update` returns);
        # status bookkeeping belongs to the actor's loop
        self._system.store.apply(change)
        self._on_loop(lambda: self._system.source_applied(ChangeSet(full=False, current=True)))

    def report_valid(self) -> None:
        self._on_loop(lambda: self._system.source_valid(True))

    def report_error(self, kind: str, message: str, *, status: int | None = None) -> None:
        info = ErrorInfo(kind=kind, message=message, status=status, at=self._system.clock.wall())
        self._on_loop(lambda: self._system.source_valid(False, info))
