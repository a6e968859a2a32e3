"""The status feed (`/status/feed.json`): every component by region as this node last heard of
it, the SDK fleet's freshness as the ingestion nodes report it, the operator notices, and one
overall state. Pure: the readings, the notices and `now_ms` are handed in. The page
(`page_html`) renders exactly this document, so the two never disagree.

The document is a stable contract (docs/operations/regions.md, "Status page"): fields are added,
never renamed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.notice import Notice, notice_json
from flagstaff_server.status_page.components import (
    HEALTHY,
    SELF,
    UNKNOWN_REGION,
    Component,
    Reading,
    components_of,
    fleet_of,
    region_of,
)

FORMAT = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeInfo:
    """The node serving the page."""

    role: str
    region: str
    version: str


def build_feed(
    *, node: NodeInfo, readings: Iterable[Reading], notices: Iterable[Notice], now_ms: int
) -> dict[str, Any]:
    readings = list(readings)
    components: list[Component] = []
    serving: Component | None = None
    for reading in readings:
        found = components_of(reading)
        components += found
        if reading.source == SELF:
            serving = next((c for c in found if c.kind in ("delivery", "relay")), None)
    problems = [c for c in components if c.state not in HEALTHY]
    return {
        "format": FORMAT,
        "generatedAt": now_ms,
        "node": {"role": node.role, "region": node.region, "version": node.version},
        "state": "operational" if not problems else "degraded",
        "summary": _summary(components, problems),
        "delivery": None if serving is None else serving.to_json(),
        "notices": [notice_json(n) for n in notices],
        "regions": _regions(components, node.region),
        "fleet": _fleet(readings),
    }


def _summary(components: list[Component], problems: list[Component]) -> str:
    if not problems:
        return f"All {len(components)} components are operational."
    verb = "needs" if len(problems) == 1 else "need"
    return f"{len(problems)} of {len(components)} components {verb} attention."


def _regions(components: list[Component], own: str) -> list[dict[str, Any]]:
    by_region: dict[str, list[Component]] = {}
    for component in components:
        by_region.setdefault(component.region, []).append(component)

    def order(name: str) -> tuple[int, str]:
        return (0 if name == own else 2 if name == UNKNOWN_REGION else 1, name)

    regions = []
    for name in sorted(by_region, key=order):
        listed = by_region[name]
        healthy = all(c.state in HEALTHY for c in listed)
        regions.append(
            {
                "name": name,
                "state": "operational" if healthy else "degraded",
                "components": [c.to_json() for c in listed],
            }
        )
    return regions


def _fleet(readings: list[Reading]) -> list[dict[str, Any]]:
    rows = []
    for reading in readings:
        fleet = fleet_of(reading.body)
        if fleet is None or reading.body is None:
            continue
        rows.append(
            {
                "region": region_of(reading.body),
                "node": reading.label,
                "reachable": reading.reachable or reading.source == SELF,
                "lastSeen": reading.last_seen_ms,
                **_fleet_figures(fleet),
            }
        )
    return rows


def _fleet_figures(fleet: Mapping[str, Any]) -> dict[str, Any]:
    """The summary's figures, each checked (a peer's body is not trusted to be well formed)."""
    figures: dict[str, Any] = {}
    for name in ("asOf", "running", "stale", "stopped", "worstDataAgeMs"):
        value = fleet.get(name)
        figures[name] = value if isinstance(value, int) and not isinstance(value, bool) else None
    return figures
