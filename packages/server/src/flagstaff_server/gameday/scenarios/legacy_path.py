"""`legacy-path`: the incident's trigger. Each region's traffic is moved, at once, to a delivery
node that has just been started with an empty cache (no snapshots: it loads everything from the
database), while clients keep retrying. The two regions are the two arms of one run: region A's
new node runs with admission control (a full-payload rate sized to the fleet, as in
`reconnect-storm`), region B's with it switched off (limits no storm reaches). The report puts
the arms side by side: what each node shed with `Retry-After`, sent in full and used.

At a small size the node without admission control does not fall over (there is too little
load); the comparison shows what it did instead: every full payload sent at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import httpx

from flagstaff_server.gameday.node import Node
from flagstaff_server.gameday.scenario import (
    Check,
    Drill,
    Phase,
    Scenario,
    current_within,
    no_event_lost,
    served_throughout,
)
from flagstaff_server.gameday.scenarios.reconnect_storm import delivery_settings
from flagstaff_server.gameday.timeline import fleet_caught_up

RECOVERY_BOUND_S = 10.0
UNLIMITED = {
    "FLAGSTAFF_FULL_SENDS_PER_SECOND": "1000000",
    "FLAGSTAFF_MAX_STREAMS": "1000000",
    "FLAGSTAFF_MAX_CLIENT_STREAMS": "1000000",
    "FLAGSTAFF_CLIENT_EVALUATIONS_PER_SECOND": "1000000",
}
"""Admission control off: limits no game-day fleet reaches."""
ARMS = (("a", "with admission control"), ("b", "without admission control"))


def _settings(drill: Drill, region: str) -> dict[str, str]:
    if region == "a":
        return delivery_settings(int(drill.notes["protocol_clients"]))
    return dict(UNLIMITED)


async def steady(drill: Drill) -> None:
    drill.driving = False
    drill.notes["protocol_clients"] = sum(v.kind.startswith(("fdv", "client")) for v in drill.views)
    await drill.edit()


async def move_traffic(drill: Drill) -> None:
    """Start an empty node per region and, once its process answers `/status`, point the
    region's proxy at it before it holds any data: clients reconnect to it while it loads
    (503 + Retry-After until it has the data). Moving traffic before the process listens
    would count its seconds of imports as an outage, which is not the incident's (the legacy
    node was up with an empty cache), and lengthen the official SDK's backoff with the
    machine's load (it doubles on every failure, 9.9 s seen after a 10 s start at load ~5)."""
    drill.begin_fault()
    new: dict[str, Node] = {}
    for region in (drill.topology.a, drill.topology.b):
        node = drill.topology.add_delivery(region, "legacy", _settings(drill, region.name))
        node.launch()
        new[region.name] = node
    await asyncio.gather(*(asyncio.to_thread(node.wait_ready) for node in new.values()))
    for region in (drill.topology.a, drill.topology.b):
        assert region.delivery_proxy is not None
        region.delivery_proxy.retarget(new[region.name].port)
    drill.notes["moved"] = time.monotonic()
    drill.notes["sheds_before"] = {
        name: sum(v.sheds for v in drill.views if v.region == name) for name, _ in ARMS
    }
    await drill.edit()
    moved = float(drill.notes["moved"])

    async def ready(name: str, node: Node) -> tuple[str, float]:
        await asyncio.to_thread(drill.topology.wait_serving, node)
        return name, round(time.monotonic() - moved, 2)

    drill.notes["ready_after_s"] = dict(
        await asyncio.gather(*(ready(name, node) for name, node in new.items()))
    )
    drill.notes["answered"] = time.monotonic()
    drill.notes["new_nodes"] = new
    drill.end_fault()


def _counter(text: str, name: str, label: str) -> int:
    for line in text.splitlines():
        if line.startswith(f"{name}{{{label}}} "):
            return int(float(line.rsplit(" ", 1)[1]))
    return 0


async def measure(drill: Drill) -> None:
    """Read what each new node counted (`/metrics`) before the run ends."""
    measured: dict[str, dict[str, int]] = {}
    nodes: dict[str, Node] = drill.notes.get("new_nodes", {})
    for name, node in nodes.items():
        try:
            async with httpx.AsyncClient(timeout=5) as http:
                text = (await http.get(f"{node.url}/metrics")).text
        except httpx.HTTPError:
            text = ""
        measured[name] = {
            "shed_full_send_rate": _counter(
                text, "flagstaff_delivery_sheds_total", 'reason="full_send_rate"'
            ),
            "shed_not_ready": _counter(
                text, "flagstaff_delivery_sheds_total", 'reason="not_ready"'
            ),
            "full_sends": _counter(text, "flagstaff_delivery_sends_total", 'payload="full"'),
        }
    drill.notes["measured"] = measured


def comparison(drill: Drill) -> dict[str, Any]:
    """The two arms side by side: a row per figure, a column per arm."""
    measured: dict[str, dict[str, int]] = drill.notes.get("measured", {})
    before: dict[str, int] = drill.notes.get("sheds_before", {})
    ready: dict[str, float] = drill.notes.get("ready_after_s", {})
    nodes: dict[str, Node] = drill.notes.get("new_nodes", {})
    since = float(drill.notes.get("answered", 0.0))
    rows: list[list[Any]] = []

    def row(label: str, values: dict[str, Any]) -> None:
        rows.append([label, *(values.get(name) for name, _ in ARMS)])

    row("clients", {n: sum(v.region == n for v in drill.views) for n, _ in ARMS})
    row("node serving after the move (s)", ready)
    for key, label in (
        ("shed_full_send_rate", "shed: full-payload rate (503 + Retry-After)"),
        ("shed_not_ready", "shed: no data yet (503 + Retry-After)"),
        ("full_sends", "full payloads sent"),
    ):
        row(label, {n: measured.get(n, {}).get(key) for n, _ in ARMS})
    row(
        "Retry-After answers seen by clients",
        {n: sum(v.sheds for v in drill.views if v.region == n) - before.get(n, 0) for n, _ in ARMS},
    )
    row(
        "peak CPU of the new node (%)",
        {n: round(node.usage.peak_cpu_percent, 1) for n, node in nodes.items()},
    )
    row(
        "every client current, after both nodes answered (s)",
        {n: _caught_up(drill, n, since) for n, _ in ARMS},
    )
    return {"columns": ["figure", *(label for _, label in ARMS)], "rows": rows}


def _caught_up(drill: Drill, region: str, since: float) -> float | None:
    holdings = [v.holding for v in drill.views if v.region == region]
    caught = fleet_caught_up(drill.timeline, holdings, since) if holdings else None
    return None if caught is None else round(caught, 2)


def checks(report: Mapping[str, Any], drill: Drill) -> list[Check]:
    measured: dict[str, dict[str, int]] = drill.notes.get("measured", {})
    with_admission = measured.get("a", {})
    without = measured.get("b", {})
    recovery = report["recovery_s"]
    return [
        served_throughout(report),
        Check(
            "with admission control the empty node shed with Retry-After",
            with_admission.get("shed_full_send_rate", 0) > 0,
            f"{with_admission.get('shed_full_send_rate', 0)} full payloads shed,"
            f" {with_admission.get('full_sends', 0)} sent",
        ),
        Check(
            "without admission control nothing was shed for load",
            bool(without) and without.get("shed_full_send_rate", 0) == 0,
            f"{without.get('shed_full_send_rate', 0)} shed, {without.get('full_sends', 0)}"
            " full payloads sent",
        ),
        current_within(
            RECOVERY_BOUND_S,
            recovery,
            "after both new nodes answered",
            drill.waited_for(drill.fault_end()),
        ),
        no_event_lost(report),
    ]


SCENARIO = Scenario(
    name="legacy-path",
    summary="traffic moved to empty delivery nodes while clients retry, with and without admission",
    phases=(
        Phase("steady", 0.2, steady),
        Phase(
            "moved",
            0.8,
            move_traffic,
            min_seconds=RECOVERY_BOUND_S + 2.0,
            until=Drill.recovered,
        ),
        Phase("measured", 0.0, measure),
    ),
    checks=checks,
    compare=comparison,
)
