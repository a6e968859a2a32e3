"""The one composition root: settings → store → change feed → control plane → ASGI apps.

`Flagstaff` builds every adapter and hands it in; nothing else constructs a store, a feed or an
app. Its `asgi` callable is what uvicorn (or an in-process test client) serves: `/status`, the
management API under `/api/`, and the delivery plane's paths, each mounted below in `mount_apps`.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from fastapi import FastAPI

from flagstaff_server import backends, demo, part_status
from flagstaff_server.adapters.clock import system_clock
from flagstaff_server.adapters.oidc_client import AuthlibOidcClient
from flagstaff_server.adapters.webhook_sender import HttpSender
from flagstaff_server.asgi import ASGIApp
from flagstaff_server.break_glass import BreakGlassApp, KillSwitch, load_public_keys
from flagstaff_server.break_glass import handles as break_glass_handles
from flagstaff_server.break_glass.state_file import AuditItem
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.delivery import handles as delivery_handles
from flagstaff_server.delivery.client_route import handles as client_handles
from flagstaff_server.delivery.client_side import ClientDelivery
from flagstaff_server.delivery.freshness import Freshness
from flagstaff_server.http.api.application import build_api
from flagstaff_server.http.root import RootApp, WhenReady
from flagstaff_server.http.scim.application import build_scim, is_scim_path
from flagstaff_server.http.trigger_endpoint import TriggerEndpoint
from flagstaff_server.http.trigger_endpoint import handles as trigger_handles
from flagstaff_server.ingest import IngestConfig, IngestNode
from flagstaff_server.ingest import handles as ingest_handles
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.fleet_summary import FleetWatch
from flagstaff_server.notice import Notice
from flagstaff_server.regions.epoch_watch import EpochWatch
from flagstaff_server.regions.region_status import RegionStatus
from flagstaff_server.services.break_glass import record_document
from flagstaff_server.services.notices import notice_of, record_signed_notice
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import (
    ChangeFeed,
    Clock,
    EnvironmentRecord,
    EpochRecord,
    Store,
)
from flagstaff_server.settings import Settings
from flagstaff_server.status_page import SignedNotices, StatusPageApp, StatusSite
from flagstaff_server.status_page import handles as status_page_handles
from flagstaff_server.telemetry.telemetry_port import Telemetry
from flagstaff_server.ui.asgi import UiApp, is_ui_path
from flagstaff_server.worker import Worker
from flagstaff_server.worker import metrics as worker_metrics

log = logging.getLogger(__name__)


def version() -> str:
    try:
        return importlib.metadata.version("flagstaff-server")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def is_api_path(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


class Flagstaff:
    """The assembled server. `store`, `feed` and `clock` may be injected (tests); otherwise they
    come from `settings` when `start` runs (opening a database blocks, so it is not done here)."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        feed: ChangeFeed | None = None,
        analytics: AnalyticsStore | None = None,
        clock: Clock = system_clock,
        announce: Callable[[str], None] | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.settings = settings
        self.telemetry = telemetry
        """OpenTelemetry export (`flagstaff serve` with `OTEL_*` set); None: none."""
        self.clock = clock
        self.version = version()
        self.announce = announce or log.info
        self.store = store
        self.feed = feed
        self.plane: ControlPlane | None = None
        # single sign-on's client of the identity provider (its HTTP connections), with the plane
        self.oidc: AuthlibOidcClient | None = None
        self.api: FastAPI | None = None
        self.scim: ASGIApp | None = None
        self.delivery: DeliveryNode | None = None
        self.client_delivery: ClientDelivery | None = None
        self.kill_switch: KillSwitch | None = None
        self.ingest: IngestNode | None = None
        self.region_status: RegionStatus | None = None
        self.worker: Worker | None = None
        self.webhook_sender: HttpSender | None = None
        self.status_site: StatusSite | None = None
        self.signed_notices: SignedNotices | None = None
        self.freshness: Freshness | None = None
        self.fleet_watch: FleetWatch | None = None
        self.epoch_watch: EpochWatch | None = None
        self.analytics = analytics
        """Built at start from the settings unless handed in (tests hand in one with a tally
        of their own)."""
        self.ready = False
        self.welcome: demo.Welcome | None = None
        self.asgi = RootApp(self)
        self.mount_apps()

    # assembly ----------------------------------------------------------------------------------

    def mount_apps(self) -> None:
        """Mount order is dispatch order. Each plane's app is built at start; until then its paths
        answer 503. Ingestion (event endpoints) mounts here too when it exists."""
        if self.settings.serves_api:
            self.asgi.mount(is_api_path, self.when_ready(lambda: self.api))
            self.asgi.mount(is_scim_path, self.when_ready(lambda: self.scim))
            self.asgi.mount(
                trigger_handles, TriggerEndpoint(lambda: self.plane if self.ready else None)
            )
            self.asgi.mount(is_ui_path, UiApp())
        delivery = self.when_ready(lambda: None if self.delivery is None else self.delivery.app)
        if self.settings.serves_delivery:
            self.asgi.mount(delivery_handles, delivery)
            self.asgi.mount(client_handles, self.when_ready(lambda: self.client_delivery))
            self.asgi.mount(break_glass_handles, BreakGlassApp(lambda: self.kill_switch))
            self.asgi.mount(
                status_page_handles,
                StatusPageApp(
                    lambda: self.status_site if self.ready else None,
                    lambda: self.signed_notices if self.ready else None,
                ),
            )
        if self.settings.serves_ingest:
            self.asgi.mount(
                ingest_handles,
                self.when_ready(lambda: None if self.ingest is None else self.ingest.app),
            )
            if not self.settings.serves_delivery:
                # the unmounted delivery node's /metrics carries ingestion's lines too
                self.asgi.mount(lambda path: path == "/metrics", delivery)
        if self.settings.role == "worker":
            # a worker-only process's /metrics (elsewhere delivery's carries the worker's lines)
            self.asgi.mount(
                lambda path: path == "/metrics",
                self.when_ready(
                    lambda: (
                        None
                        if self.worker is None
                        else worker_metrics.MetricsApp(self.worker.states)
                    )
                ),
            )

    def when_ready(self, part: Callable[[], ASGIApp | None]) -> WhenReady:
        """`part`'s app once the server has started; until then (and while it stops) a 503."""
        return WhenReady(lambda: part() if self.ready else None)

    def analytics_store(self) -> AnalyticsStore:
        """The analytics store, opened on first use (a worker-only process opens it when a
        guarded rollout first looks at its metrics)."""
        if self.analytics is None:
            self.analytics = AnalyticsStore(self.settings.resolved_analytics_url)
        return self.analytics

    def environment_records(self) -> list[EnvironmentRecord]:
        assert self.store is not None
        with self.store.unit_of_work(read_only=True) as uow:
            return uow.environments.list()

    def stored_notices(self) -> list[Notice]:
        """The notices in the database (the status page reads them once at start)."""
        assert self.store is not None
        with self.store.unit_of_work(read_only=True) as uow:
            return [notice_of(record) for record in uow.notices.list()]

    def record_signed_notice(self, item: AuditItem) -> None:
        """The signed notices' audit sink: blocking, raises while the database is unreachable."""
        assert self.store is not None
        record_signed_notice(
            self.store, item.document, accepted_at=item.accepted_at, accepted_by=item.accepted_by
        )

    def record_break_glass(self, item: AuditItem) -> None:
        """The kill switch's audit sink: blocking, raises while the database is unreachable."""
        assert self.store is not None
        record_document(
            self.store, item.document, accepted_at=item.accepted_at, accepted_by=item.accepted_by
        )

    def epoch_records(self) -> list[EpochRecord]:
        assert self.store is not None
        with self.store.unit_of_work(read_only=True) as uow:
            return uow.epochs.list()

    # lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        if self.store is None:
            self.store = await asyncio.to_thread(backends.open_store, self.settings)
        if self.telemetry is not None:
            self.telemetry.trace_store(self.store)
        if self.feed is None:
            self.feed = backends.open_feed(self.settings, self.store)
        self.oidc = AuthlibOidcClient()
        self.plane = ControlPlane(
            store=self.store,
            feed=self.feed,
            clock=self.clock,
            key_grace=timedelta(seconds=self.settings.key_grace_seconds),
            admin_token=self.settings.admin_token,
            oidc=self.oidc,
        )
        self.api = build_api(
            self.plane, version=self.version, max_body_bytes=self.settings.api_max_body_bytes
        )
        self.scim = build_scim(self.plane)
        if self.settings.serves_api or self.settings.serves_ingest:
            if self.analytics is None:
                self.analytics = AnalyticsStore(self.settings.resolved_analytics_url)
            self.api.state.analytics = self.analytics
        self.region_status = RegionStatus(
            region=self.settings.region,
            replication=self.store.replication,
            clock=self.clock,
            # the API runs where writes go: it keeps the record of the primary's region
            records_primary=self.settings.serves_api,
        )
        if self.settings.serves_api:
            # the API needs its database: a standby is read, not seeded, and says so
            state = await asyncio.to_thread(self.store.replication.state)
            writable = state.role != "standby"
            self.welcome = await asyncio.to_thread(
                demo.welcome, self.plane, self.settings, writable=writable
            )
            if not writable:
                self.announce(
                    f"region {self.settings.region}: the database is a standby, the API is "
                    "read-only until it is promoted (flagstaff dr promote)"
                )
            await self.region_status.state()  # records the primary's region on a primary
            if getattr(self.store, "dialect", None) == "postgresql":
                # checks at once (a promotion or PITR while nothing ran), then every 2 s
                self.epoch_watch = EpochWatch(self.plane)
                await self.epoch_watch.start()
        if self.settings.serves_delivery or self.settings.serves_ingest:
            # an ingest-only node runs delivery's node unmounted: its credentials index
            self.delivery = DeliveryNode(
                self.feed,
                DeliveryConfig(
                    data_dir=self.settings.data_dir / "delivery",
                    limits=self.settings.delivery_limits,
                    heartbeat_seconds=self.settings.heartbeat_seconds,
                ),
                environments=self.environment_records,
                epochs=self.epoch_records,
            )
            if self.settings.serves_delivery:
                # before the node starts: it restores its overrides while loading snapshots
                self.kill_switch = KillSwitch(
                    self.delivery,
                    keyring=load_public_keys(self.settings.break_glass_keys),
                    peers=self.settings.break_glass_peers,
                    audit_sink=self.record_break_glass,
                    accepted_by=f"{self.settings.role} node {self.settings.host}:"
                    f"{self.settings.port}",
                )
                # likewise: it restores its notices while the node loads
                self.status_site = StatusSite(
                    own_status=self.status,
                    role=self.settings.role,
                    version=self.version,
                    node=self.delivery,
                    peers=self.settings.status_peers,
                    stored_notices=self.stored_notices,
                    directory=self.settings.data_dir / "status",
                    poll_seconds=self.settings.status_poll_seconds,
                )
                self.signed_notices = SignedNotices(
                    self.status_site.board,
                    keyring=self.kill_switch.keyring,
                    forwarder=self.kill_switch.forwarder,
                    audit_sink=self.record_signed_notice,
                    accepted_by=self.kill_switch.accepted_by,
                    directory=self.settings.data_dir / "status",
                )
            await self.delivery.start()
            if self.telemetry is not None and self.settings.serves_delivery:
                self.telemetry.observe_delivery(self.delivery)
            if self.kill_switch is not None:
                await self.kill_switch.start()
            if self.signed_notices is not None:
                await self.signed_notices.start()
            if self.settings.serves_delivery:
                self.freshness = Freshness(
                    self.delivery, interval_seconds=min(2.0, self.settings.status_poll_seconds)
                )
                await self.freshness.start()
        if self.settings.serves_worker:
            self.webhook_sender = HttpSender(timeout=self.settings.webhook_timeout_seconds)
            self.worker = Worker(
                self.store,
                backends.worker_jobs(
                    self.settings, self.plane, self.webhook_sender, self.analytics_store
                ),
                clock=self.clock,
                lease_ttl=timedelta(seconds=self.settings.worker_lease_seconds),
                poll=timedelta(seconds=self.settings.worker_poll_seconds),
            )
            if self.delivery is not None:
                worker = self.worker
                self.delivery.metric_sources.append(lambda: worker_metrics.render(worker.states))
            await self.worker.start()
        if self.settings.serves_delivery:
            assert self.delivery is not None
            self.client_delivery = ClientDelivery(self.delivery)
            self.client_delivery.start()
        if self.settings.serves_ingest:
            assert self.delivery is not None
            self.ingest = IngestNode(
                IngestConfig(
                    data_dir=self.settings.data_dir / "ingest",
                    disk_budget_bytes=self.settings.ingest_disk_budget_bytes,
                    process=self.settings.ingest_process,
                    processor_process=True,
                    redis_url=self.settings.redis_url,
                ),
                delivery=self.delivery,
                analytics=self.analytics,
            )
            await self.ingest.start()
            if self.telemetry is not None:
                self.telemetry.observe_ingest(self.ingest)
            assert self.analytics is not None
            self.fleet_watch = FleetWatch(analytics=self.analytics)
            await self.fleet_watch.start()
        if self.status_site is not None:
            await self.status_site.start()
        self.ready = True
        for line in demo.banner(self.settings, self.welcome):
            self.announce(line)

    async def stop(self) -> None:
        self.ready = False
        if self.worker is not None:
            await self.worker.stop()
        if self.webhook_sender is not None:
            self.webhook_sender.close()
        if self.oidc is not None:
            self.oidc.close()
        for part in (
            self.status_site,
            self.signed_notices,
            self.fleet_watch,
            self.freshness,
            self.epoch_watch,
        ):
            if part is not None:
                await part.stop()
        if self.ingest is not None:
            await self.ingest.stop()
        elif self.analytics is not None:
            self.analytics.close()
        if self.kill_switch is not None:
            await self.kill_switch.stop()
        if self.client_delivery is not None:
            # streams served on the connection are not uvicorn's to close: end them here
            await self.client_delivery.stop()
        if self.delivery is not None:
            await self.delivery.stop()
        if self.feed is not None:
            await self.feed.aclose()
        if self.store is not None:
            self.store.close()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Flagstaff]:
        """Started for the duration of the block (what the ASGI lifespan does under uvicorn)."""
        await self.start()
        try:
            yield self
        finally:
            await self.stop()

    # apps --------------------------------------------------------------------------------------

    # status ------------------------------------------------------------------------------------

    async def status(self) -> tuple[int, dict[str, Any]]:
        """`GET /status`: 200 once started (healthy, or degraded when a part is down), else 503."""
        parts: dict[str, dict[str, Any]] = {}
        store, feed = self.store, self.feed
        if store is not None:
            parts["store"] = await part_status.check(lambda: part_status.store_status(store))
        if feed is not None:
            parts["changeFeed"] = await part_status.check(lambda: part_status.feed_status(feed))
        if self.settings.serves_api:
            parts["api"] = {"status": "ok" if self.ready else "starting"}
        if self.settings.serves_delivery:
            parts["delivery"] = part_status.delivery_status(
                self.delivery, self.freshness, self.client_delivery
            )
        if self.settings.serves_ingest:
            parts["ingest"] = (
                self.ingest.status() if self.ingest is not None else {"status": "starting"}
            )
            if self.fleet_watch is not None:
                parts["ingest"]["fleet"] = self.fleet_watch.block()
        if self.settings.serves_worker:
            parts["worker"] = (
                self.worker.status() if self.worker is not None else {"status": "starting"}
            )
        healthy = self.ready and all(part["status"] == "ok" for part in parts.values())
        region: dict[str, Any] = {"name": self.settings.region}
        if self.region_status is not None:
            region = await self.region_status.block()
        body = {
            "status": "healthy" if healthy else "degraded",
            "ready": self.ready,
            "version": self.version,
            "role": self.settings.role,
            "region": region,
            "parts": parts,
        }
        return (200 if self.ready else 503), body
