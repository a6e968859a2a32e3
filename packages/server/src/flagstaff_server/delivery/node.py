"""A delivery node: the snapshot store, the feed consumer, the disk persister (`persister`),
the stream housekeeper (`housekeeping`) and the ASGI app, started and stopped together. The
consumer also keeps the node on the database's history across epochs: a node that was ahead of a
new epoch's start replays the store's whole outbox into fresh snapshots (`replay`) and sends its
streams full data (`resync`).

Background loops are actors: each catches, counts, logs and backs off at its top, so a broken
feed or disk never stops serving. Nothing here touches the database on a request path: an
unknown SDK key only waits for a coalesced background probe of the feed (and store).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from flagstaff_server.delivery import housekeeping, metrics, snapshot_file, sse
from flagstaff_server.delivery.admission import Admission
from flagstaff_server.delivery.asgi import DeliveryApp
from flagstaff_server.delivery.config import DeliveryConfig
from flagstaff_server.delivery.credential import credentials_of
from flagstaff_server.delivery.persister import SnapshotPersister
from flagstaff_server.delivery.position import FeedPosition, against, at_marker
from flagstaff_server.delivery.probe import CoalescedProbe
from flagstaff_server.delivery.replay import marker_position, replay_history
from flagstaff_server.delivery.store import (
    Environment,
    EnvironmentId,
    ItemCheck,
    SnapshotStore,
    check_item,
)
from flagstaff_server.services.epochs import epoch_of_item
from flagstaff_server.services.ports import Change, ChangeFeed, EnvironmentRecord, EpochRecord
from flagstaff_server.tasks import cancel_and_wait

if TYPE_CHECKING:
    from flagstaff_server.delivery.client_side import ClientDelivery

log = logging.getLogger(__name__)

EnvironmentSource = Callable[[], Sequence[EnvironmentRecord]]
"""Blocking read of every environment record (run in a worker thread, never on a request)."""

EpochSource = Callable[[], Sequence[EpochRecord]]
"""Blocking read of the database's epochs, oldest first (a worker thread, never a request)."""


class DeliveryNode:
    def __init__(
        self,
        feed: ChangeFeed,
        config: DeliveryConfig | None = None,
        *,
        environments: EnvironmentSource | None = None,
        epochs: EpochSource | None = None,
        check: ItemCheck | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        rng: Callable[[], float] = random.random,
        cpu_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        """`cpu_clock` measures what client-side evaluations cost (the event loop thread's CPU
        time); tests hand in a fixed one so their admission decisions do not depend on load."""
        self.feed = feed
        self.config = config or DeliveryConfig()
        self.environment_source = environments
        self.epoch_source = epochs
        self.clock = clock
        self.wall = wall
        self.rng = rng
        self.store = SnapshotStore(
            log_limit=self.config.log_limit, clock=clock, check=check or check_item
        )
        self.admission = Admission(self.config.limits, clock=clock, random=rng, cpu_clock=cpu_clock)
        self.counts: Counter[str] = Counter()
        self.metric_sources: list[Callable[[], list[str]]] = []
        """More `/metrics` lines from parts built on this node (client-side delivery)."""
        self.loaders: list[Callable[[], None]] = []
        """Blocking steps run once the disk snapshots are loaded, before the feed is read (in
        the loading thread): parts built on the node restore their own state there."""
        self.persister = SnapshotPersister(
            self.store,
            self.config.data_dir,
            self.counts,
            position=lambda: self.feed_position,
            delay_seconds=self.config.persist_delay_seconds,
            retry_seconds=self.config.feed_retry_max_seconds / 10,
        )
        self.pre_writers = self.persister.pre_writers
        """Called on the loop when snapshots are collected for writing: each returns a blocking
        write (or None), run before the snapshot files are written, so their state on disk is
        never older than the snapshots it explains (the break-glass overlay's)."""
        self.side_readers: list[Callable[[Change], None]] = []
        """Parts built on the node that read the feed's changes belonging to no environment
        (operator notices, for the status page); called on the loop as each one is applied."""
        self.client_side: ClientDelivery | None = None
        """Client-side delivery built on this node, if any (it registers itself), whose streams
        the connection protocol serves on the connection (`delivery.connection`)."""
        self.feed_position = FeedPosition()
        """The last feed seq this node has applied, with its epoch."""
        self.head = 0
        """The newest seq the feed reported."""
        self.current = False
        """Caught up with the feed at least once since start: an unknown key is truly unknown."""
        self.from_disk = False
        self.feed_connected = False
        self.last_propagation_seconds = 0.0
        self.started = clock()
        self._catch_up_target: int | None = None
        self._resync_reason: str | None = None
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._probe = CoalescedProbe(
            self._probe_once,
            self.counts,
            clock=clock,
            interval_seconds=self.config.probe_interval_seconds,
            timeout_seconds=self.config.probe_timeout_seconds,
        )
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def app(self) -> DeliveryApp:
        return DeliveryApp(self)

    @property
    def position(self) -> int:
        """The last feed seq this node has applied."""
        return self.feed_position.seq

    @property
    def epoch(self) -> int:
        return self.feed_position.epoch

    def metrics_text(self) -> bytes:
        """The `/metrics` body: this node's families, then each of `metric_sources`' lines."""
        return metrics.render(
            admission_counts=self.admission.counts,
            node_counts=self.counts,
            environments=tuple(self.store.environments.values()),
            position=self.position,
            epoch=self.epoch,
            head=self.head,
            propagation_seconds=self.last_propagation_seconds,
            feed_connected=self.feed_connected,
            current=self.current,
            now=self.clock(),
            more=[source() for source in self.metric_sources],
        )

    # lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        if self.config.data_dir is not None:
            await asyncio.to_thread(self._load, self.config.data_dir)
        if self.loaders:
            await asyncio.to_thread(self._run_loaders)
        self._tasks = [
            asyncio.create_task(self._consume(), name="delivery-feed"),
            asyncio.create_task(self._housekeep(), name="delivery-housekeeping"),
        ]
        if self.config.data_dir is not None:
            self._tasks.append(asyncio.create_task(self.persister.run(), name="delivery-persist"))

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        self._probe.cancel()
        for env in self.store.environments.values():
            env.broadcaster.close_all("shutdown", sse.goodbye("shutdown"))
        if self.config.data_dir is not None:
            await self.persister.write_now()

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[DeliveryNode]:
        await self.start()
        try:
            yield self
        finally:
            await self.stop()

    def _load(self, directory: Path) -> None:
        loaded = snapshot_file.load(directory, log_limit=self.config.log_limit)
        for snapshot, credentials in loaded.environments:
            self.store.put(snapshot, credentials)
        self.store.replace_credentials(
            env.credentials for env in self.store.environments.values() if env.credentials
        )
        self.feed_position = loaded.position
        self.persister.loaded(loaded.position)
        self.from_disk = bool(loaded.environments)
        log.info(
            "delivery loaded %d environments (%d with their change log) from %s at feed "
            "position %d (epoch %d)",
            len(loaded.environments),
            loaded.logs_kept,
            directory,
            loaded.position.seq,
            loaded.position.epoch,
        )

    def _run_loaders(self) -> None:
        for loader in self.loaders:
            loader()

    # serving decisions -------------------------------------------------------------------------

    def serves(self, env: Environment) -> bool:
        """Whether `env`'s snapshot may be served: the node has caught up once, or it holds a
        complete earlier snapshot from disk."""
        return self.current or (self.from_disk and env.credentials is not None)

    async def probe(self) -> bool:
        """Wait for a feed (and store) check that started after this call: True when the node was
        then current, so a key it still does not know is truly unknown."""
        return await self._probe()

    async def _probe_once(self) -> None:
        self.counts["probe"] += 1
        head = await self.feed.latest_seq()
        self.head = max(self.head, head)
        if self.environment_source is not None:
            records = await asyncio.to_thread(self.environment_source)
            self.store.replace_credentials(credentials_of(records))
        await self.wait_for_position(head)

    async def _load_credentials(self) -> None:
        """Credentials from the store at start: a failure is logged, never fatal, because the
        feed carries environment changes too and may be reachable when the store is not."""
        assert self.environment_source is not None
        try:
            records = await asyncio.to_thread(self.environment_source)
        except Exception as exc:
            self.counts["credential_load_error"] += 1
            log.warning("delivery could not read environments from the store: %s", exc)
            return
        self.store.replace_credentials(credentials_of(records))

    async def wait_for_position(self, seq: int) -> None:
        if self.position >= seq:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((seq, future))
        try:
            await future
        finally:
            self._waiters = [(s, f) for s, f in self._waiters if f is not future]

    # feed consumer -----------------------------------------------------------------------------

    async def _consume(self) -> None:
        delay = self.config.feed_retry_seconds
        while True:
            try:
                if self.environment_source is not None and not self.current:
                    await self._load_credentials()
                await self._check_epochs()
                if self._resync_reason is not None:
                    await self.resync()
                head = await self.feed.latest_seq()
                self.head = max(self.head, head)
                self._catch_up_target = head
                self.feed_connected = True
                self._check_current()
                async with contextlib.aclosing(self.feed.subscribe(self.position)) as changes:
                    async for change in changes:
                        self.apply(change)
                        delay = self.config.feed_retry_seconds
                        if self._resync_reason is not None:
                            break
                if self._resync_reason is not None:
                    continue  # resynchronised at the top of the loop
                raise ConnectionError("change feed subscription ended")
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.feed_connected = False
                self.counts["feed_error"] += 1
                log.warning("delivery feed error, retrying in %.1fs: %s", delay, exc)
            await asyncio.sleep(delay * (0.5 + 0.5 * self.rng()))
            delay = min(delay * 2, self.config.feed_retry_max_seconds)

    def apply(self, change: Change) -> None:
        """Apply one feed change (the consumer's only entry point; tests call it directly). A
        change that shows the node off the database's history asks for a resync instead
        (`resync_reason`; the consumer runs it)."""
        if change.seq <= self.position:
            self.counts["change_replayed"] += 1
            return
        if self._resync_reason is not None:
            return  # everything is read again from the store
        if change.kind == "epoch":
            self._enter_epoch(change)
            return
        if change.epoch != self.epoch:
            # the epoch's marker comes first on the database's history: this is another one
            self.counts["change_foreign"] += 1
            self.request_resync(
                f"change {change.seq} is of epoch {change.epoch}, the node is in {self.epoch}"
            )
            return
        outcome = self.store.apply(change)
        self.counts[f"change_{outcome}"] += 1
        self.last_propagation_seconds = max(0.0, self.wall() - change.at.timestamp())
        if outcome == "notice":
            for read in self.side_readers:
                read(change)
        elif outcome != "stale":
            self.persister.add([(change.project, change.environment)])
        self._moved_to(replace(self.feed_position, seq=change.seq))

    def _enter_epoch(self, change: Change) -> None:
        marker = epoch_of_item(change.item)
        if marker is None:
            self.counts["change_invalid"] += 1
            self.request_resync(f"unreadable epoch marker at seq {change.seq}")
            return
        epoch, started_after = marker
        if at_marker(self.feed_position, epoch, started_after) == "resync":
            self.request_resync(
                f"epoch {epoch} began after seq {started_after}; the node was at seq "
                f"{self.position} of epoch {self.epoch}"
            )
            return
        self.counts["change_epoch"] += 1
        log.info("delivery enters epoch %d at seq %d", epoch, change.seq)
        self._moved_to(marker_position(change, epoch, started_after))

    def _moved_to(self, position: FeedPosition) -> None:
        self.feed_position = position
        self.head = max(self.head, position.seq)
        self.persister.wake()
        self._check_current()
        if self._waiters:
            for seq, future in self._waiters:
                if seq <= self.position and not future.done():
                    future.set_result(None)

    # epochs ------------------------------------------------------------------------------------

    @property
    def resync_reason(self) -> str | None:
        """Why the node must resynchronise in full, while it must."""
        return self._resync_reason

    def request_resync(self, reason: str) -> None:
        if self._resync_reason is None:
            log.warning("delivery must resynchronise from the store: %s", reason)
            self._resync_reason = reason

    async def _check_epochs(self) -> None:
        """Before subscribing: is the node's position on the database's history? Without an
        answer (the store is down) the feed's own epoch marker decides later."""
        if self.epoch_source is None or self.position == 0:
            return
        try:
            records = await asyncio.to_thread(self.epoch_source)
        except Exception as exc:
            self.counts["epoch_check_error"] += 1
            log.warning("delivery could not read the database's epochs: %s", exc)
            return
        if against(self.feed_position, records) == "resync":
            self.request_resync(
                f"position {self.position} of epoch {self.epoch} is not on the database's "
                f"history (epochs {[(r.epoch, r.started_after_seq) for r in records]})"
            )

    async def resync(self) -> None:
        """Rebuild every environment from the store's whole history (a replay of the feed from
        seq 0 into fresh snapshots, while the current ones go on serving), then install it:
        streams of environments whose data changed get all of it. Raises what the feed raises
        (the consumer backs off and tries again)."""
        reason = self._resync_reason or "requested"
        started = self.clock()
        replayed = await replay_history(
            self.feed,
            self.store,
            log_limit=self.config.log_limit,
            clock=self.clock,
            check=self.store.check,
        )
        staged, position = replayed.staged, replayed.position
        changed = self.store.adopt(staged, epoch=position.epoch, seq=position.seq)
        self.counts["resync"] += 1
        self._resync_reason = None
        for notice in replayed.notices:
            for read in self.side_readers:
                read(notice)
        self.persister.add(staged.environments)
        self.persister.add(await asyncio.to_thread(self.persister.stored_environments))
        if self.environment_source is not None:
            await self._load_credentials()
        self._moved_to(position)
        log.warning(
            "delivery resynchronised in full (%s): %d environments, %d changed, at seq %d of "
            "epoch %d in %.2fs",
            reason,
            len(staged.environments),
            changed,
            position.seq,
            position.epoch,
            self.clock() - started,
        )

    def _check_current(self) -> None:
        target = self._catch_up_target
        if not self.current and target is not None and self.position >= target:
            self.current = True
            log.info("delivery is current at feed position %d", self.position)

    # persistence (`persister`) -------------------------------------------------------------

    def mark_changed(self, env_id: EnvironmentId | None = None) -> None:
        """Have the persister write `env_id`'s snapshot (and the pre-writers' state) soon."""
        if env_id is not None:
            self.persister.add([env_id])
        self.persister.wake()

    # stream housekeeping (`housekeeping`) ------------------------------------------------------

    def drop_streams(self, reason: str = "rebalance") -> int:
        """Close every open stream cleanly (FDv2 streams get a goodbye); SDKs reconnect, to this
        node or another. Returns how many were closed."""
        return housekeeping.drop_streams(self.store, reason)

    async def _housekeep(self) -> None:
        while True:
            await asyncio.sleep(self.config.tick_seconds)
            try:
                self.sweep()
            except Exception:
                self.counts["housekeeping_error"] += 1
                log.exception("delivery housekeeping failed")

    def sweep(self) -> None:
        """Heartbeats for idle streams, clean closes for streams past their age."""
        housekeeping.sweep(
            self.store,
            self.admission,
            heartbeat_seconds=self.config.heartbeat_seconds,
            now=self.clock(),
        )
