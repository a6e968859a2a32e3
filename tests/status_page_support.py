"""Test support for the status page with real processes: a private PostgreSQL (support's, so the
database can be killed without touching the shared one), the management
API, an ingestion node, a delivery node watching both through FLAGSTAFF_STATUS_PEERS, and a
relay in front of the delivery node; each process on a loopback port it keeps across restarts.

Shared by tests/integration/status_page and the browser test in tests/e2e/status_page; asserts
nothing about Flagstaff itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagstaff_server.regions.postgres_cluster import (
    PostgresInstance,
)
from support import management
from support.management import Keys
from support.private_postgres import private_cluster, private_postgres
from support.processes import FlagstaffProcess, ServeProcess, loopback_get, running

ADMIN = "status-page-admin-token-0123456789"
POLL_SECONDS = "0.3"
"""How often the nodes read their peers' /status (2 s in production; a test waits less)."""
NOTICE = {
    "title": "EU edits are read-only",
    "message": "The management API is down. Use the kill switch for emergencies; flags keep "
    "being served from every delivery node.",
    "severity": "warning",
    "regions": ["local"],
}


@dataclass(kw_only=True)
class RelayProcess(FlagstaffProcess):
    """`flagstaff relay` for one environment in front of `upstream`."""

    name: str = "relay"
    upstream: str = ""
    keys: Keys | None = None
    peers: tuple[str, ...] = ()
    break_glass_keys: Path | None = None

    def arguments(self) -> list[str]:
        assert self.keys is not None
        self.data_dir.mkdir(parents=True, exist_ok=True)
        peers = ", ".join(f'"{url}"' for url in self.peers)
        trusted = "" if self.break_glass_keys is None else f'keys = ["{self.break_glass_keys}"]'
        config = self.data_dir / "relay.toml"
        config.write_text(
            f'[relay]\nupstream = ["{self.upstream}"]\n'
            f"[status]\npeers = [{peers}]\npoll_seconds = {POLL_SECONDS}\n"
            f"[break_glass]\n{trusted}\n"
            f'[environments.production]\nsdk_key = "{self.keys.sdk_key}"\n'
            f'mobile_key = "{self.keys.mobile_key}"\n'
            f'client_side_id = "{self.keys.client_side_id}"\n',
            encoding="utf-8",
        )
        return [
            *("relay", "--config", str(config), "--port", str(self.port)),
            *("--data-dir", str(self.data_dir / "state"), "--shutdown-seconds", "1"),
        ]


@dataclass(kw_only=True)
class Platform:
    database: PostgresInstance
    api: ServeProcess
    ingest: ServeProcess
    delivery: ServeProcess
    relay: RelayProcess
    keys: Keys
    notices: list[dict[str, Any]] = field(default_factory=list)

    def post_notice(self, **body: Any) -> dict[str, Any]:
        with management.admin_client(self.api.url, ADMIN) as api:
            notice: dict[str, Any] = management.ok(
                api.post("/api/v2/status/notices", json={**NOTICE, **body})
            )
        self.notices.append(notice)
        return notice

    def take_control_plane_down(self) -> None:
        """The API killed (no clean shutdown) and the database with it."""
        self.api.kill()
        self.database.kill()


def feed(node: FlagstaffProcess) -> dict[str, Any]:
    response = loopback_get(f"{node.url}/status/feed.json", timeout=5)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def components(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(component, node) → the component, across regions."""
    return {
        (c["component"], c["node"]): c
        for region in document["regions"]
        for c in region["components"]
    }


def host(process: FlagstaffProcess) -> str:
    """How the status page names a peer: the host and port of its URL."""
    return f"127.0.0.1:{process.port}"


@contextmanager
def platform(root: Path, *, break_glass_keys: Path | None = None) -> Iterator[Platform]:
    """Everything started and a project created; stopped (and the database removed) at the end.
    With `break_glass_keys` (a public-key file) the delivery node and the relay trust it, and the
    delivery node forwards what it accepts to the relay."""
    with private_postgres() as database:
        database_args = ["--database", database.url]
        api = ServeProcess(
            data_dir=root / "api",
            name="api",
            admin_token=ADMIN,
            args=["--role", "api", *database_args],
        )
        ingest = ServeProcess(
            data_dir=root / "ingest",
            name="ingest",
            admin_token=ADMIN,
            args=["--role", "ingest", *database_args],
        )
        with running(api, ingest):
            with management.admin_client(api.url, ADMIN) as client:
                keys = management.create_project(client)
            delivery = ServeProcess(
                data_dir=root / "delivery",
                name="delivery",
                admin_token=ADMIN,
                args=["--role", "delivery", *database_args],
                env={
                    "FLAGSTAFF_STATUS_PEERS": f"{api.url}/status,{ingest.url}/status",
                    "FLAGSTAFF_STATUS_POLL_SECONDS": POLL_SECONDS,
                },
            )
            relay = RelayProcess(
                data_dir=root / "relay",
                upstream=delivery.url,
                keys=keys,
                peers=(f"{delivery.url}/status",),
                break_glass_keys=break_glass_keys,
            )
            if break_glass_keys is not None:
                delivery.env["FLAGSTAFF_BREAK_GLASS_KEYS"] = str(break_glass_keys)
                delivery.env["FLAGSTAFF_BREAK_GLASS_PEERS"] = relay.url
            with running(delivery), running(relay):
                yield Platform(
                    database=database,
                    api=api,
                    ingest=ingest,
                    delivery=delivery,
                    relay=relay,
                    keys=keys,
                )


# two regions: the browser test's topology ------------------------------------------------------


@dataclass(kw_only=True)
class TwoRegions:
    """Region a: the PostgreSQL primary, its API, an ingestion and a delivery node. Region b: a
    hot standby of a's database, its read-only API and a delivery node. Every delivery node
    watches every other node through FLAGSTAFF_STATUS_PEERS."""

    primary: PostgresInstance
    standby: PostgresInstance
    api_a: ServeProcess
    ingest_a: ServeProcess
    delivery_a: ServeProcess
    api_b: ServeProcess
    delivery_b: ServeProcess

    def post_notice(self, **body: Any) -> dict[str, Any]:
        with management.admin_client(self.api_a.url, ADMIN) as api:
            notice: dict[str, Any] = management.ok(
                api.post("/api/v2/status/notices", json={**NOTICE, **body})
            )
        return notice

    def lose_region_a_control_plane(self) -> None:
        """Region a's API killed and its database with it: no edits anywhere (b is a standby)."""
        self.api_a.kill()
        self.primary.kill()


def serve(root: Path, name: str, region: str, role: str, database: str, **env: str) -> ServeProcess:
    return ServeProcess(
        data_dir=root / name,
        name=name,
        admin_token=ADMIN,
        args=["--role", role, "--database", database],
        env={"FLAGSTAFF_REGION": region, "FLAGSTAFF_STATUS_POLL_SECONDS": POLL_SECONDS, **env},
    )


@contextmanager
def two_regions(root: Path) -> Iterator[TwoRegions]:
    with private_cluster() as cluster:
        primary = cluster.start_primary("a")
        api_a = serve(root, "api-a", "a", "api", primary.url)
        ingest_a = serve(root, "ingest-a", "a", "ingest", primary.url)
        with running(api_a, ingest_a):
            # the schema exists once a's API is up: b's standby starts from it
            standby = cluster.start_standby(primary, "b")
            api_b = serve(root, "api-b", "b", "api", standby.url)
            delivery_a = serve(root, "delivery-a", "a", "delivery", primary.url)
            delivery_b = serve(root, "delivery-b", "b", "delivery", standby.url)
            for node, other in ((delivery_a, delivery_b), (delivery_b, delivery_a)):
                watched = (api_a, ingest_a, api_b, other)
                node.env["FLAGSTAFF_STATUS_PEERS"] = ",".join(f"{p.url}/status" for p in watched)
            with running(api_b, delivery_a, delivery_b):
                yield TwoRegions(
                    primary=primary,
                    standby=standby,
                    api_a=api_a,
                    ingest_a=ingest_a,
                    delivery_a=delivery_a,
                    api_b=api_b,
                    delivery_b=delivery_b,
                )
