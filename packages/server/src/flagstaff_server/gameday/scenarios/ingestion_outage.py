"""`ingestion-outage`: the analytics store (the PostgreSQL both ingest nodes process into) is
stopped; a little later region A's ingest node is SIGKILLed, so senders posting to it fail
over to B. Then A's ingest node starts again (it recovers its journal) and the store comes back.
Ingest nodes acknowledge a payload once it is in their journal on disk, so acknowledgements go
on while the store is down; afterwards the store must hold every acknowledged event exactly once.
Flag delivery is not touched: every client keeps evaluating from data.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from flagstaff_server.gameday.scenario import (
    Check,
    Drill,
    Phase,
    Scenario,
    served_throughout,
)


async def store_stops(drill: Drill) -> None:
    drill.begin_fault()
    drill.notes["acknowledged_at_store_stop"] = drill.events_acknowledged()
    await asyncio.to_thread(drill.topology.analytics.stop)


async def ingest_killed(drill: Drill) -> None:
    drill.notes["failures_before_kill"] = drill.event_failures()
    await asyncio.to_thread(drill.topology.a.ingest.kill)


async def restored(drill: Drill) -> None:
    drill.notes["acknowledged_while_down"] = drill.events_acknowledged() - int(
        drill.notes["acknowledged_at_store_stop"]
    )
    drill.notes["failures_while_killed"] = drill.event_failures() - int(
        drill.notes["failures_before_kill"]
    )
    ingest = drill.topology.a.ingest
    ingest.launch()
    await asyncio.to_thread(ingest.wait_ready)
    await asyncio.to_thread(drill.topology.analytics.start)
    drill.end_fault()


def checks(report: Mapping[str, Any], drill: Drill) -> list[Check]:
    events = report["events"]
    while_down = int(drill.notes.get("acknowledged_while_down", 0))
    failures = int(drill.notes.get("failures_while_killed", 0))
    return [
        served_throughout(report),
        Check(
            "events acknowledged while the analytics store was down",
            while_down > 0,
            f"{while_down} events acknowledged (journalled) with the store stopped",
        ),
        Check(
            "senders failed over when A's ingest node was killed",
            failures > 0,
            f"{failures} failed posts to the killed node, retried to the other region",
        ),
        Check(
            "every event acknowledged in the end",
            events["unacknowledged"] == 0 and events["acknowledged"] == events["sent"],
            f"{events['acknowledged']} of {events['sent']} acknowledged",
        ),
        Check(
            "no acknowledged event lost",
            events["lost"] == 0,
            f"{events['lost']} of {events['acknowledged']} acknowledged events missing from"
            " the analytics store",
        ),
        Check(
            "no event counted twice",
            events["duplicated"] == 0,
            f"{events['duplicated']} events counted more than once",
        ),
    ]


SCENARIO = Scenario(
    name="ingestion-outage",
    summary="analytics store stopped, an ingest node SIGKILLed: nothing acknowledged lost",
    phases=(
        Phase("steady", 0.2),
        Phase("store down", 0.3, store_stops, min_seconds=3.0),
        Phase("ingest killed", 0.3, ingest_killed, min_seconds=3.0),
        Phase("restored", 0.2, restored, min_seconds=3.0),
    ),
    checks=checks,
)
