"""What one node's `/status` body says about the platform's components, in words a status page
can show: the management API, its database (role, replication lag) and change feed, flag
delivery (data age), event ingestion (backlog), a relay and its event forwarding. Pure.

Only nodes that run the API report the database and the change feed (each other node's view of
them shows in its own data age), so a region lists each once per API node. Details never carry
error text or addresses: the page needs no credential, and a reader learns what works and what
to do, not how the platform is wired. A node that did not answer keeps the components of its
last answer, each marked unreachable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from flagstaff_server.notice import REGION_PATTERN

State = Literal["operational", "standby", "degraded", "down", "unreachable"]
STATES: tuple[State, ...] = ("operational", "standby", "degraded", "down", "unreachable")
HEALTHY: frozenset[State] = frozenset({"operational", "standby"})
UNKNOWN_REGION = "unknown"
DEFAULT_REGION = "local"
"""The region of a node that does not say (`FLAGSTAFF_REGION`'s default)."""
DATABASE_WORDS: Mapping[str, str] = {"primary": "primary", "embedded": "embedded (SQLite)"}
STALE_DATA_SECONDS = 30.0
"""Delivery data older than this is shown as degraded: changes made since may be missing."""

Kind = Literal[
    "api", "database", "changeFeed", "delivery", "ingest", "relay", "relayEvents", "node"
]
NAMES: Mapping[Kind, str] = {
    "api": "Management API",
    "database": "Database",
    "changeFeed": "Change feed",
    "delivery": "Flag delivery",
    "ingest": "Event ingestion",
    "relay": "Relay",
    "relayEvents": "Relay event forwarding",
    "node": "Node",
}


SELF = "self"


@dataclass(slots=True, kw_only=True)
class Reading:
    """The last answer of one node's `/status`, or why there was none (`peer_watch` keeps
    them)."""

    source: str
    """The URL polled, or "self" for this node."""
    body: dict[str, Any] | None = None
    """The last body it answered (kept while it does not answer)."""
    last_seen_ms: int | None = None
    checked_ms: int | None = None
    error: str | None = None
    """Why the last check failed; None when it answered."""

    @property
    def label(self) -> str:
        return "this node" if self.source == SELF else urlsplit(self.source).netloc

    @property
    def reachable(self) -> bool:
        return self.error is None and self.body is not None and self.checked_ms is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class Component:
    kind: Kind
    node: str
    """How the page names the node that reported it (host:port, or "this node")."""
    region: str
    state: State
    detail: str
    last_seen_ms: int | None = None
    figures: Mapping[str, Any] = field(default_factory=dict)
    """Numbers behind the detail (dataAgeSeconds, backlog, replicationLagSeconds, ...)."""

    @property
    def name(self) -> str:
        return NAMES[self.kind]

    def to_json(self) -> dict[str, Any]:
        return {
            "component": self.kind,
            "name": self.name,
            "node": self.node,
            "region": self.region,
            "state": self.state,
            "detail": self.detail,
            "lastSeen": self.last_seen_ms,
            **self.figures,
        }


def region_of(body: Mapping[str, Any]) -> str:
    """The region a `/status` body names; the default for none, "unknown" for a malformed one."""
    region = body.get("region")
    if isinstance(region, Mapping):
        region = region.get("name")
    if region is None:
        return DEFAULT_REGION
    return (
        region if isinstance(region, str) and REGION_PATTERN.fullmatch(region) else UNKNOWN_REGION
    )


def components_of(reading: Reading) -> list[Component]:
    """The components the node's last `/status` answer reports, marked unreachable when it did
    not answer this time; a node that never answered is one unreachable "node"."""
    body, node = reading.body, reading.label
    reachable, last_seen_ms = reading.reachable, reading.last_seen_ms
    if body is None:
        return [
            Component(
                kind="node",
                node=node,
                region=UNKNOWN_REGION,
                state="unreachable",
                detail="has not answered since this node started",
            )
        ]
    region = region_of(body)
    found = (
        _relay(body, node, region) if body.get("role") == "relay" else _serve(body, node, region)
    )
    if reachable:
        return [replace(c, last_seen_ms=last_seen_ms) for c in found]
    return [
        replace(
            c,
            state="unreachable",
            detail=f"not answering (it was {c.state} when last seen)",
            last_seen_ms=last_seen_ms,
        )
        for c in found
    ]


def _part(body: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    parts = body.get("parts")
    part = parts.get(name) if isinstance(parts, Mapping) else None
    return part if isinstance(part, Mapping) else None


def _database_role(body: Mapping[str, Any]) -> tuple[str | None, float | None]:
    region = body.get("region")
    database = region.get("database") if isinstance(region, Mapping) else None
    if not isinstance(database, Mapping):
        return None, None
    role = database.get("role")
    lag = database.get("replicationLagSeconds")
    return (
        role if isinstance(role, str) else None,
        float(lag) if isinstance(lag, int | float) and not isinstance(lag, bool) else None,
    )


def _serve(body: Mapping[str, Any], node: str, region: str) -> list[Component]:
    found: list[Component] = []
    ready = body.get("ready") is True
    role, lag = _database_role(body)
    store = _part(body, "store")
    store_ok = store is not None and store.get("status") == "ok"
    if _part(body, "api") is not None:
        found.append(
            _api(
                node,
                region,
                ready=ready,
                store_ok=store_ok,
                standby=role == "standby",
                primary=_primary_region(body),
            )
        )
        if store is not None:
            backend = store.get("backend")
            found.append(
                _database(
                    node,
                    region,
                    store_ok=store_ok,
                    role=role if role is not None or backend != "sqlite" else "embedded",
                    lag=lag,
                )
            )
        feed = _part(body, "changeFeed")
        if feed is not None:
            found.append(_change_feed(feed, node, region))
    delivery = _part(body, "delivery")
    if delivery is not None:
        found.append(_delivery(delivery, node, region, ready=ready))
    ingest = _part(body, "ingest")
    if ingest is not None:
        found.append(_ingest(ingest, node, region))
    return found


def _primary_region(body: Mapping[str, Any]) -> str | None:
    block = body.get("region")
    primary = block.get("primaryRegion") if isinstance(block, Mapping) else None
    return primary if isinstance(primary, str) and REGION_PATTERN.fullmatch(primary) else None


def _api(
    node: str, region: str, *, ready: bool, store_ok: bool, standby: bool, primary: str | None
) -> Component:
    if not ready:
        state: State = "down"
        detail = "starting"
    elif not store_ok:
        state, detail = "down", "its database is unreachable: no edits or sign-ins"
    elif standby:
        where = (
            "the primary region" if primary is None or primary == region else f"region {primary}"
        )
        state, detail = "standby", f"read-only: edits go to {where} until a promotion"
    else:
        state, detail = "operational", "edits and sign-ins work"
    return Component(kind="api", node=node, region=region, state=state, detail=detail)


def _database(
    node: str, region: str, *, store_ok: bool, role: str | None, lag: float | None
) -> Component:
    figures: dict[str, Any] = {"databaseRole": role, "replicationLagSeconds": lag}
    if not store_ok:
        return Component(
            kind="database",
            node=node,
            region=region,
            state="down",
            detail="unreachable",
            figures=figures,
        )
    if role == "standby":
        detail = "hot standby" + ("" if lag is None else f", replication lag {duration(lag)}")
        state: State = "standby"
    else:
        detail = DATABASE_WORDS.get(role or "", "answering")
        state = "operational"
    return Component(
        kind="database", node=node, region=region, state=state, detail=detail, figures=figures
    )


def _change_feed(feed: Mapping[str, Any], node: str, region: str) -> Component:
    status = feed.get("status")
    if status == "ok":
        state: State = "operational"
        detail = "Redis" if feed.get("kind") == "redis" else "in-process"
    elif status == "degraded":
        state, detail = "degraded", "Redis unreachable: delivery reads changes from the database"
    else:
        state, detail = "down", "unreachable: changes wait in the database"
    return Component(kind="changeFeed", node=node, region=region, state=state, detail=detail)


def _delivery(part: Mapping[str, Any], node: str, region: str, *, ready: bool) -> Component:
    age = _number(part.get("dataAgeSeconds"))
    figures = {"dataAgeSeconds": age, "position": part.get("position")}
    if not ready or part.get("status") == "starting":
        state: State = "down"
        detail = "starting"
    elif age is None:
        state = "degraded"
        detail = "serving what it holds; how old its data is is not known yet"
    elif age > STALE_DATA_SECONDS:
        state = "degraded"
        detail = f"serving data {duration(age)} old: changes made since may be missing"
    else:
        state, detail = "operational", f"serving current data ({duration(age)} old)"
    return Component(
        kind="delivery", node=node, region=region, state=state, detail=detail, figures=figures
    )


def _ingest(part: Mapping[str, Any], node: str, region: str) -> Component:
    backlog = part.get("backlog")
    figures = {"backlog": backlog}
    waiting = "" if not isinstance(backlog, int) else f"; {backlog} batches wait"
    if part.get("status") == "starting":
        state: State = "down"
        detail = "starting"
    elif part.get("analyticsStore") == "down":
        state = "degraded"
        detail = f"events are accepted and kept on disk, not processed yet{waiting}"
    else:
        state = "operational"
        detail = "accepting and processing events" + waiting
    return Component(
        kind="ingest", node=node, region=region, state=state, detail=detail, figures=figures
    )


def _relay(body: Mapping[str, Any], node: str, region: str) -> list[Component]:
    environments = body.get("environments")
    envs = (
        [e for e in environments.values() if isinstance(e, Mapping)]
        if isinstance(environments, Mapping)
        else []
    )
    serving = [e for e in envs if e.get("serving") is True]
    connected = [e for e in envs if e.get("status") == "connected"]
    ages = [a for e in serving if (a := _number(e.get("dataAgeSeconds"))) is not None]
    worst = max(ages) if ages else None
    figures = {
        "environments": len(envs),
        "connected": len(connected),
        "dataAgeSeconds": worst,
    }
    if body.get("ready") is not True:
        state: State = "down"
        detail = "starting"
    elif not serving:
        state, detail = "down", "holds no data for its environments yet"
    elif len(connected) < len(envs):
        old = "" if worst is None else f" (data up to {duration(worst)} old)"
        state = "degraded"
        detail = f"{len(connected)} of {len(envs)} environments reach upstream; serving{old}"
    else:
        state, detail = "operational", f"all {len(envs)} environments current"
    found = [
        Component(
            kind="relay", node=node, region=region, state=state, detail=detail, figures=figures
        )
    ]
    events = body.get("events")
    if isinstance(events, Mapping):
        spooled = events.get("spooled")
        if events.get("upstreamConnected") is True:
            event_state: State = "operational"
            event_detail = "forwarding events upstream"
        else:
            event_state = "degraded"
            event_detail = f"upstream unreachable: {spooled} payloads kept on disk"
        found.append(
            Component(
                kind="relayEvents",
                node=node,
                region=region,
                state=event_state,
                detail=event_detail,
                figures={"spooled": spooled},
            )
        )
    return found


def fleet_of(body: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The SDK fleet summary an ingestion node reports in its `/status` (`parts.ingest.fleet`)."""
    if body is None:
        return None
    ingest = _part(body, "ingest")
    fleet = ingest.get("fleet") if ingest is not None else None
    return fleet if isinstance(fleet, Mapping) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def duration(value: float) -> str:
    """A duration a reader takes in at a glance: under 1 s, 2.5 s, 12 s, 5 min, 3 h, 2 days."""
    if value < 1:
        return "under 1 s"
    if value < 10:
        return f"{value:.1f} s"
    if value < 120:
        return f"{value:.0f} s"
    if value < 7200:
        return f"{value / 60:.0f} min"
    if value < 172_800:
        return f"{value / 3600:.0f} h"
    return f"{value / 86_400:.0f} days"
