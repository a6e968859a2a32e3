"""The game-day topology: two regions of real processes on loopback. Region A holds the
PostgreSQL primary, an API node, a delivery node and an ingest node; region B a hot standby of
A's database, its own delivery and ingest nodes. A third private PostgreSQL is the analytics
store both ingest nodes process into. Every delivery and ingest node sits behind a fault proxy,
which is where clients connect, so a scenario can cut, delay or blackhole what they see.

It starts, seeds (a project with the probe flag) and tears down; faults are the scenarios'.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from flagstaff_server.break_glass.document import (
    CLEAR,
    ENDPOINT,
    OFF,
    OVERRIDE,
    canonical_bytes,
    unsigned_document,
)
from flagstaff_server.break_glass.signing import generate_key_pair, key_id, load_private_key, sign
from flagstaff_server.gameday.fault_proxy import FaultProxy
from flagstaff_server.gameday.node import Node
from flagstaff_server.regions.postgres_cluster import PostgresCluster, PostgresInstance

PROJECT = "gameday"
ENVIRONMENT = "production"
PROBE_FLAG = "gameday-probe"
"""The flag the change driver edits: variation 0's value is `v<n>`, the off variation is
`KILLED`; it has no targeting, so every context is served the same value."""
KILLED = "killed"
ADMIN_TOKEN = "gameday-admin-token-" + "0" * 24
CONTEXT = {"kind": "user", "key": "gameday-user"}
RETRY_AFTER_SECONDS = 2
"""The delivery nodes' `Retry-After` base: shed answers say 2-4 s. The default's 5-10 s spends
half to all of a 10 s recovery objective on one shed; a client shed twice in a storm (the
bucket empties again as the shed come back) was 11.9 s late on a quiet machine."""


@dataclass(frozen=True, slots=True)
class Keys:
    sdk_key: str
    mobile_key: str
    client_side_id: str


@dataclass
class Region:
    """One region's database and nodes, and the proxies clients reach them through."""

    name: str
    database: PostgresInstance
    delivery: Node
    ingest: Node
    api: Node | None = None
    delivery_proxy: FaultProxy | None = None
    ingest_proxy: FaultProxy | None = None

    @property
    def delivery_url(self) -> str:
        assert self.delivery_proxy is not None
        return self.delivery_proxy.url

    @property
    def ingest_url(self) -> str:
        assert self.ingest_proxy is not None
        return self.ingest_proxy.url

    def nodes(self) -> list[Node]:
        return [n for n in (self.api, self.delivery, self.ingest) if n is not None]


@dataclass
class Topology:
    """Build with `Topology.start(directory)`; `close` stops everything it started."""

    root: Path
    cluster: PostgresCluster
    a: Region
    b: Region
    analytics: PostgresInstance
    keys: Keys
    private_key_path: Path
    proxies: list[FaultProxy] = field(default_factory=list)
    node_env: dict[str, str] = field(default_factory=dict)
    """The settings every node starts with (admin token, heartbeat, keys, analytics store)."""
    added: list[Node] = field(default_factory=list)
    """Nodes a scenario started (`add_delivery`), stopped with the rest."""
    writer: str = "a"
    """The region whose API the change driver edits through (B's once promoted)."""

    @classmethod
    def start(
        cls,
        root: Path,
        *,
        heartbeat_seconds: float = 1.0,
        delivery_env: Mapping[str, str] | None = None,
        standby_api: bool = False,
    ) -> Topology:
        """`delivery_env`: settings for both delivery nodes on top of the common ones (a
        scenario's admission limits); `standby_api`: region B runs an API node too (it serves
        reads on the standby and takes writes once the standby is promoted)."""
        root.mkdir(parents=True, exist_ok=True)
        pair = generate_key_pair()
        private, public = root / "break-glass.key", root / "break-glass.pub"
        private.write_bytes(pair.private_pem)
        private.chmod(0o600)
        public.write_bytes(pair.public_pem)
        cluster = PostgresCluster()
        try:
            return cls._start(
                root,
                cluster,
                (private, public),
                heartbeat_seconds,
                dict(delivery_env or {}),
                standby_api,
            )
        except BaseException:
            cluster.close()
            raise

    @classmethod
    def _start(
        cls,
        root: Path,
        cluster: PostgresCluster,
        keys: tuple[Path, Path],
        heartbeat_seconds: float,
        delivery_env: dict[str, str],
        standby_api: bool,
    ) -> Topology:
        private, public = keys
        # the two databases are made (initdb) and started side by side
        with ThreadPoolExecutor(max_workers=2) as pool:
            made = pool.map(cluster.start_primary, ("a", "analytics"))
            primary, analytics = list(made)
        common = {
            "FLAGSTAFF_ADMIN_TOKEN": ADMIN_TOKEN,
            "FLAGSTAFF_HEARTBEAT_SECONDS": str(heartbeat_seconds),
            "FLAGSTAFF_BREAK_GLASS_KEYS": str(public),
            "FLAGSTAFF_ANALYTICS_DATABASE_URL": analytics.url,
            "FLAGSTAFF_RETRY_AFTER_SECONDS": str(RETRY_AFTER_SECONDS),
        }

        def node(region: str, role: str, database: PostgresInstance) -> Node:
            return Node(
                name=f"{region}-{role}",
                role=role,
                data_dir=root / f"{region}-{role}",
                args=["--database", database.url],
                env={
                    **common,
                    "FLAGSTAFF_REGION": region,
                    **(delivery_env if role == "delivery" else {}),
                },
            )

        a_api = node("a", "api", primary)
        a = Region("a", primary, node("a", "delivery", primary), node("a", "ingest", primary))
        a.api = a_api
        launched = [a_api]
        try:
            a_api.start()  # migrates the schema, which the standby must replicate before B starts
            # A's nodes start (a few seconds of imports each) while B's standby is copied
            for each in (a.delivery, a.ingest):
                each.launch()
                launched.append(each)
            standby = cluster.start_standby(primary, "b")
            standby.wait_for_replay(primary.wal_lsn())
        except BaseException:
            for each in launched:
                each.stop()
            raise
        b = Region("b", standby, node("b", "delivery", standby), node("b", "ingest", standby))
        if standby_api:
            b.api = node("b", "api", standby)
        started = [a.delivery, a.ingest, *b.nodes()]
        topology = cls(root, cluster, a, b, analytics, Keys("", "", ""), private)
        topology.node_env = common
        try:
            for each in b.nodes():
                each.launch()
            for each in started:
                each.wait_ready()
            for region in (a, b):
                region.delivery_proxy = FaultProxy(region.delivery.port, name=f"{region.name}-lb")
                region.ingest_proxy = FaultProxy(
                    region.ingest.port, name=f"{region.name}-ingest-lb"
                )
                for proxy in (region.delivery_proxy, region.ingest_proxy):
                    topology.proxies.append(proxy.start())
            topology.keys = seed(a_api.url)
            # clients start once both regions serve the project: an official SDK that met a
            # 503 first would carry that backoff into the scenario's fault (it resets only
            # after 60 s of a healthy stream)
            for region in (a, b):
                topology.wait_serving(region.delivery)
        except BaseException:
            topology.close()
            raise
        return topology

    def nodes(self) -> list[Node]:
        return [*self.a.nodes(), *self.b.nodes(), *self.added]

    def add_delivery(self, region: Region, suffix: str, env: Mapping[str, str]) -> Node:
        """A new delivery node in `region` (its own empty data directory, reading the region's
        database) with `env` on top of the common settings; not started."""
        name = f"{region.name}-delivery-{suffix}"
        node = Node(
            name=name,
            role="delivery",
            data_dir=self.root / name,
            args=["--database", region.database.url],
            env={**self.node_env, "FLAGSTAFF_REGION": region.name, **env},
        )
        self.added.append(node)
        return node

    def wait_serving(self, node: Node) -> None:
        """Until `node` (a delivery node) serves the probe flag to the SDK key."""
        node.wait_ready(serving=(self.keys.sdk_key, PROBE_FLAG))

    def close(self) -> None:
        for proxy in self.proxies:
            proxy.close()
        # every node is told to stop at once; each then gets its own grace period
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(Node.stop, self.nodes()))
        self.cluster.close()

    # what scenarios do through it --------------------------------------------------------------

    def region(self, name: str) -> Region:
        return self.a if name == "a" else self.b

    def api(self) -> httpx.Client:
        """A client of the writing region's API (`writer`)."""
        node = self.region(self.writer).api
        assert node is not None
        return httpx.Client(base_url=node.url, headers={"Authorization": ADMIN_TOKEN}, timeout=10)

    def break_glass(self, *, clear: bool = False) -> dict[str, bool]:
        """Sign an override turning the probe flag off (or the clear of it) with the operator's
        key and hand it to both regions' delivery nodes directly; which accepted it."""
        key = load_private_key(self.private_key_path)
        document: dict[str, Any] = unsigned_document(
            kind=CLEAR if clear else OVERRIDE,
            key_id=key_id(key.public_key()),
            project=PROJECT,
            environment=ENVIRONMENT,
            flag=PROBE_FLAG,
            issued_at=time.time_ns() // 1_000_000,
            action=None if clear else OFF,
            expires_at=None,
            document_id=str(uuid.uuid4()),
        )
        document["signature"] = sign(key, canonical_bytes(document))
        accepted = {}
        for region in (self.a, self.b):
            url = f"{region.delivery.url}{ENDPOINT}"
            try:
                method = "DELETE" if clear else "POST"
                response = httpx.request(method, url, json=document, timeout=10)
                accepted[region.name] = response.status_code < 300
            except httpx.HTTPError:
                accepted[region.name] = False
        return accepted


def seed(api_url: str) -> Keys:
    """The game-day project and its probe flag (on, serving `v0`), made through the API."""
    headers = {"Authorization": ADMIN_TOKEN}
    with httpx.Client(base_url=api_url, headers=headers, timeout=30) as api:
        environments = [{"key": ENVIRONMENT, "name": "Production", "color": "417505"}]
        body = {"key": PROJECT, "name": "Game day", "environments": environments}
        response = api.post("/api/v2/projects", json=body)
        response.raise_for_status()
        env = response.json()["environments"][0]
        flag = {
            "key": PROBE_FLAG,
            "name": PROBE_FLAG,
            "variations": [{"value": "v0"}, {"value": KILLED}],
            "clientSideAvailability": {"usingEnvironmentId": True, "usingMobileKey": True},
        }
        api.post(f"/api/v2/flags/{PROJECT}", json=flag).raise_for_status()
        patch = [{"op": "replace", "path": f"/environments/{ENVIRONMENT}/on", "value": True}]
        api.patch(f"/api/v2/flags/{PROJECT}/{PROBE_FLAG}", json=patch).raise_for_status()
    return Keys(env["apiKey"], env["mobileKey"], env["_id"])


def set_probe_value(api: httpx.Client, value: str) -> bool:
    """The change driver's edit: variation 0 serves `value`. False when the API refused or
    was unreachable (the control plane is down)."""
    patch = [{"op": "replace", "path": "/variations/0/value", "value": value}]
    try:
        response = api.patch(f"/api/v2/flags/{PROJECT}/{PROBE_FLAG}", json=patch)
    except httpx.HTTPError:
        return False
    return response.status_code < 300
