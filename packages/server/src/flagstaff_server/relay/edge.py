"""The relay, assembled: delivery's node fed from one upstream connection (or offline file) per
environment instead of the change feed, delivery's and client-side delivery's endpoints, the
event spool and forwarder, the optional Redis daemon-mode store, `/status` and `/metrics`.

The composition root of `flagstaff relay`; every background part is an actor started here.
Upstream data reaches SDKs in one synchronous step on the event loop (`data_sync`): diff against
the snapshot, apply each change to the node (which broadcasts it), then write through to Redis.
What `/status` says of each environment is `environment_report`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from flagstaff_server.break_glass import BreakGlassApp, KillSwitch, load_public_keys
from flagstaff_server.break_glass import handles as break_glass_handles
from flagstaff_server.delivery import DeliveryConfig, snapshot_file
from flagstaff_server.delivery import handles as delivery_handles
from flagstaff_server.delivery.client_route import handles as client_handles
from flagstaff_server.delivery.client_side import ClientDelivery
from flagstaff_server.delivery.metrics import CONTENT_TYPE
from flagstaff_server.delivery.store import EnvironmentId
from flagstaff_server.http.root import RootApp
from flagstaff_server.relay import metrics
from flagstaff_server.relay.config import RelayConfig
from flagstaff_server.relay.daemon_store import RedisDaemonStore
from flagstaff_server.relay.data_sync import DataSync
from flagstaff_server.relay.environment import RelayEnvironment
from flagstaff_server.relay.environment_report import connection_state, environment_status
from flagstaff_server.relay.events import EventsApp
from flagstaff_server.relay.events import handles as event_handles
from flagstaff_server.relay.feed import RelayFeed
from flagstaff_server.relay.forwarder import EventForwarder
from flagstaff_server.relay.node import RelayNode
from flagstaff_server.relay.offline import file_stamp
from flagstaff_server.relay.spool import EventSpool
from flagstaff_server.relay.upstream import Upstream
from flagstaff_server.status_page import SignedNotices, StatusPageApp, StatusSite
from flagstaff_server.status_page import handles as status_page_handles
from flagstaff_server.tasks import cancel_and_wait

log = logging.getLogger(__name__)


def version() -> str:
    try:
        return importlib.metadata.version("flagstaff-server")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


class Relay:
    def __init__(self, config: RelayConfig) -> None:
        self.config = config
        self.version = version()
        self.feed = RelayFeed()
        self.node = RelayNode(
            self.feed,
            DeliveryConfig(
                data_dir=config.data_dir / "delivery",
                limits=config.limits,
                heartbeat_seconds=config.heartbeat_seconds,
            ),
        )
        self.sync = DataSync(self.node, self.feed, offline_interval=config.offline_interval_seconds)
        self.client_delivery = ClientDelivery(self.node)
        # no database here: documents reach the audit log through a delivery node, when one is
        # among the peers (docs/break-glass.md)
        self.kill_switch = KillSwitch(
            self.node,
            keyring=load_public_keys(config.break_glass_keys),
            peers=config.break_glass_peers,
            accepted_by=f"relay {config.host}:{config.port}",
        )
        # before the node starts, as the kill switch: it restores its notices while loading
        self.status_site = StatusSite(
            own_status=self.status,
            role="relay",
            version=self.version,
            node=self.node,
            peers=config.status_peers,
            # the operators' notices come from upstream (a Flagstaff delivery node's feed)
            notice_feeds=tuple(f"{url}/status/feed.json" for url in config.upstream),
            directory=config.data_dir / "status",
            poll_seconds=config.status_poll_seconds,
        )
        # no database here: the relay's signed notices reach the audit log through a delivery
        # node among its break-glass peers, as overrides do
        self.signed_notices = SignedNotices(
            self.status_site.board,
            keyring=self.kill_switch.keyring,
            forwarder=self.kill_switch.forwarder,
            accepted_by=self.kill_switch.accepted_by,
            directory=config.data_dir / "status",
        )
        self.environments = {env.name: RelayEnvironment(config=env) for env in config.environments}
        self.by_id = {state.env_id: state for state in self.environments.values()}
        self.spool = EventSpool(config.data_dir / "events") if config.events.forward else None
        self.forwarder = (
            None
            if self.spool is None
            else EventForwarder(
                self.spool,
                config.events,
                config.upstream,
                {env.name: env for env in config.environments},
            )
        )
        self.events = EventsApp(
            self.node.store,
            {state.env_id: name for name, state in self.environments.items()},
            self.spool,
            config.events,
        )
        self.started = time.monotonic()
        self.ready = False
        self._tasks: list[asyncio.Task[None]] = []
        self.asgi = RootApp(self)
        self.asgi.mount(lambda path: path == "/metrics", self.metrics_app)
        self.asgi.mount(delivery_handles, self.node.app)
        self.asgi.mount(client_handles, self.client_delivery)
        self.asgi.mount(break_glass_handles, BreakGlassApp(lambda: self.kill_switch))
        self.asgi.mount(
            status_page_handles,
            StatusPageApp(
                lambda: self.status_site if self.ready else None,
                lambda: self.signed_notices if self.ready else None,
            ),
        )
        self.asgi.mount(event_handles, self.events)

    # lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.node.start()
        # Numbering goes on after everything loaded: the position file is written last (and
        # reads as 0 when any file was unreadable), and a snapshot would take changes numbered
        # at or below its own seq as stale.
        loaded = (env.snapshot.seq for env in self.node.store.environments.values())
        self.feed.start_at(max(self.node.position, *loaded, 0))
        complete = self.node.complete_on_disk()
        self._install_credentials()
        now = time.monotonic()
        for env_id in complete & set(self.by_id):
            self.node.ready.add(env_id)
            self.by_id[env_id].data_confirmed = now - self._disk_age(env_id)
        self.client_delivery.start()
        await self.kill_switch.start()
        loop = asyncio.get_running_loop()
        for state in self.environments.values():
            if self.config.redis is not None:
                state.store = RedisDaemonStore(
                    self.config.redis.url,
                    self.config.redis_prefix(state.config),
                    lambda state=state: self.sync.complete_snapshot(state),  # type: ignore[misc]
                    check_seconds=self.config.redis.check_seconds,
                )
                self._spawn(state.store.run(), f"relay-redis-{state.config.name}")
            if state.config.offline_file is not None:
                self._spawn(self.sync.watch_file(state), f"relay-offline-{state.config.name}")
            else:
                state.upstream = Upstream(
                    sdk_key=state.config.sdk_key,
                    urls=self.config.upstream,
                    stream_urls=self.config.stream_upstream,
                    stream=self.config.stream,
                    protocol=self.config.protocol,
                    timing=self.config.upstream_timing,
                    loop=loop,
                    on_change=lambda state=state: self.sync.request(state),  # type: ignore[misc]
                )
                state.upstream.start()
        if self.spool is not None and self.forwarder is not None:
            pending = await asyncio.to_thread(self.spool.recover)
            if pending:
                log.info("relay event spool holds %d payloads from before the restart", pending)
            self._spawn(self.forwarder.run(), "relay-events")
        await self.signed_notices.start()
        await self.status_site.start()
        self.ready = True
        log.info(
            "relay serving %d environments (%d from disk at once)",
            len(self.environments),
            len(self.node.ready),
        )

    async def stop(self) -> None:
        self.ready = False
        await self.status_site.stop()
        await self.signed_notices.stop()
        for state in self.environments.values():
            if state.upstream is not None:
                await asyncio.to_thread(state.upstream.stop)
        await cancel_and_wait(self._tasks)
        self._tasks = []
        await self.kill_switch.stop()
        await self.client_delivery.stop()
        await self.node.stop()
        if self.spool is not None:
            await asyncio.to_thread(self.spool.close)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Relay]:
        await self.start()
        try:
            yield self
        finally:
            await self.stop()

    def _spawn(self, coroutine: Any, name: str) -> None:
        self._tasks.append(asyncio.create_task(coroutine, name=name))

    def _install_credentials(self) -> None:
        """Configured credentials win over the disk copies; environments no longer configured
        are removed (with their open streams)."""
        for env_id in list(self.node.store.environments):
            if env_id not in self.by_id:
                self.sync.apply_change(env_id, "environment", env_id[1], 0, None)
        for state in self.environments.values():
            env = state.config
            item = {
                "project": env.project,
                "key": env.name,
                "sdkKey": env.sdk_key,
                "mobileKey": env.mobile_key,
                "clientSideId": env.client_side_id,
                "secureMode": env.secure_mode,
                "retired": [],
            }
            self.sync.apply_change(state.env_id, "environment", env.name, 0, item)

    def _disk_age(self, env_id: EnvironmentId) -> float:
        directory = self.config.data_dir / "delivery" / snapshot_file.ENVIRONMENTS_DIR
        stamp = file_stamp(directory / snapshot_file.file_name(*env_id))
        return 0.0 if stamp is None else max(0.0, time.time() - stamp[0])

    # status and metrics ------------------------------------------------------------------------

    async def status(self) -> tuple[int, dict[str, Any]]:
        environments = {
            name: environment_status(state, self.node) for name, state in self.environments.items()
        }
        healthy = self.ready and all(env["status"] == "connected" for env in environments.values())
        body: dict[str, Any] = {
            "status": "healthy" if healthy else "degraded",
            "ready": self.ready,
            "role": "relay",
            "version": self.version,
            "region": {"name": self.config.region},
            "environments": environments,
        }
        if self.spool is not None and self.forwarder is not None:
            body["events"] = {
                "spooled": len(self.spool.pending),
                "spooledBytes": self.spool.bytes,
                "forwarded": self.forwarder.counts["forwarded"],
                "rejected": self.spool.rejected,
                "upstreamConnected": self.forwarder.connected,
                "upstream": self.forwarder.current_upstream,
                "lastError": self.forwarder.last_error,
            }
        return (200 if self.ready else 503), body

    async def metrics_app(self, scope: Any, receive: Any, send: Any) -> None:
        body = self.node.metrics_text() + metrics.render(
            (
                metrics.EnvironmentReading(
                    name=name,
                    state=connection_state(state, self.node)[0],
                    data_confirmed=state.data_confirmed,
                    changes=state.changes,
                    store=state.store,
                )
                for name, state in self.environments.items()
            ),
            spool=self.spool,
            forwarder=self.forwarder,
            event_counts=self.events.counts,
        )
        headers = [(b"content-type", CONTENT_TYPE), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
