"""`reconnect-storm`: both regions' delivery proxies reset every connection for a few seconds (an
outage of the load balancers), an edit is made meanwhile, then the proxies pass traffic again
and every client reconnects at once. The delivery nodes run with a full-payload rate sized to
the fleet, so the storm exceeds it: admission control sheds the excess with `Retry-After`
instead of sending everyone everything; FDv2 clients resume from the state they hold (a delta,
no full payload); every client must be current within 10 s of the proxies passing again.

The change driver is off here: steady edits would make every FDv1 poller fetch a full payload
each second, which is load of another kind than the storm this scenario measures.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from flagstaff_server.gameday.fault_proxy import Fault
from flagstaff_server.gameday.scenario import (
    Check,
    Drill,
    Phase,
    Scenario,
    current_within,
    no_event_lost,
    served_throughout,
)

RECOVERY_BOUND_S = 10.0
OUTAGE_S = 4.0
"""Long enough that every client has failed several times (the storm is synchronised), short
enough that the official SDK's exponential backoff stays under a few seconds."""
FULL_SENDS_SHARE = 1 / 25
"""Full payloads per second per node, per protocol client of the fleet. A region holds half
the fleet; two kinds in five (FDv1 streams and polls) need a full payload on reconnect: a
fifth of a region's clients, against a bucket of two seconds' worth (2/25 of the fleet) that
refills at 1/25 a second. The storm (arriving over the ~2 s of the clients' backoff) is shed in
part; the shed come back after `Retry-After` (5-10 s, clients wait at most 5) and fit in."""


def delivery_settings(clients: int) -> dict[str, str]:
    rate = max(0.5, clients * FULL_SENDS_SHARE)
    return {"FLAGSTAFF_FULL_SENDS_PER_SECOND": f"{rate:g}"}


def _proxies(drill: Drill) -> list[Any]:
    topology = drill.topology
    return [topology.a.delivery_proxy, topology.b.delivery_proxy]


async def steady(drill: Drill) -> None:
    drill.driving = False
    await drill.edit()


async def outage(drill: Drill) -> None:
    drill.begin_fault()
    for proxy in _proxies(drill):
        proxy.set(Fault("reset"))
    await drill.edit()


async def storm(drill: Drill) -> None:
    drill.notes["sheds_before"] = sum(v.sheds for v in drill.views)
    drill.notes["fdv2_before"] = {
        v.name: (v.resumes, v.full_transfers) for v in drill.views if v.kind.startswith("fdv2")
    }
    for proxy in _proxies(drill):
        proxy.heal()
    drill.notes["healed"] = time.monotonic()
    drill.end_fault()


def checks(report: Mapping[str, Any], drill: Drill) -> list[Check]:
    sheds = sum(v.sheds for v in drill.views) - int(drill.notes.get("sheds_before", 0))
    before: dict[str, tuple[int, int]] = drill.notes.get("fdv2_before", {})
    fdv2 = [v for v in drill.views if v.name in before]
    streams = [v for v in fdv2 if v.kind == "fdv2-stream"]
    resumed = sum(v.resumes > before[v.name][0] for v in streams)
    full = sum(v.full_transfers > before[v.name][1] for v in fdv2)
    recovery = report["recovery_s"]
    return [
        served_throughout(report),
        Check(
            "admission control shed the storm with Retry-After",
            sheds > 0,
            f"{sheds} answers shed with Retry-After after the proxies passed again",
        ),
        Check(
            "FDv2 clients resumed from their basis",
            bool(streams) and resumed == len(streams) and full == 0,
            f"{resumed} of {len(streams)} FDv2 streams resumed; "
            f"{full} of {len(fdv2)} FDv2 clients were sent everything",
        ),
        current_within(
            RECOVERY_BOUND_S,
            recovery,
            "after the proxies passed again",
            drill.waited_for(drill.fault_end()),
        ),
        no_event_lost(report),
    ]


SCENARIO = Scenario(
    name="reconnect-storm",
    summary="every client reconnects at once after an outage; admission control and FDv2 resume",
    phases=(
        Phase("steady", 0.2, steady),
        Phase("outage", 0.0, outage, min_seconds=OUTAGE_S),
        Phase("storm", 0.8, storm, min_seconds=RECOVERY_BOUND_S + 2.0, until=Drill.recovered),
    ),
    checks=checks,
    delivery_settings=delivery_settings,
)
