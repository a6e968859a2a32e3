"""`cold-restart`: every delivery node (both regions) is SIGKILLed at once and started again,
region A's from its disk snapshots, region B's with its snapshot directory removed (it must load
everything from the database): the two arms of one restart, side by side in the report. Clients
keep their data through it; each region's clients must be current within 10 s of the nodes
answering again.

One restart with an arm per region, not two restarts in a row: LaunchDarkly's SDKs reset their
reconnect backoff only after a stream has been healthy for 60 s, so a second restart sooner
measures the backoff left over from the first (seen: the official Python SDK ~12 s behind after
two restarts 10 s apart), and waiting the 60 s out made this the longest game day by a minute.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Mapping
from typing import Any

from flagstaff_server.gameday.scenario import (
    Check,
    Drill,
    Phase,
    Scenario,
    current_within,
    no_event_lost,
    served_throughout,
)
from flagstaff_server.gameday.timeline import fleet_caught_up

RECOVERY_BOUND_S = 10.0
ARMS = (("a", "from disk snapshots"), ("b", "without snapshots"))


async def restart_all(drill: Drill) -> None:
    topology = drill.topology
    nodes = {"a": topology.a.delivery, "b": topology.b.delivery}
    drill.driving = False  # no edit in flight while the nodes are down
    drill.begin_fault()
    await asyncio.gather(*(asyncio.to_thread(node.kill) for node in nodes.values()))
    shutil.rmtree(nodes["b"].data_dir / "delivery", ignore_errors=True)
    for node in nodes.values():
        node.launch()
    killed = time.monotonic()

    async def ready(name: str) -> tuple[str, float]:
        await asyncio.to_thread(topology.wait_serving, nodes[name])
        return name, round(time.monotonic() - killed, 2)

    drill.notes["ready_after_s"] = dict(await asyncio.gather(*(ready(n) for n, _ in ARMS)))
    drill.driving = True
    # A change right after the restart must reach everyone: recovery is measured from it, since
    # clients already hold the value that was current while the nodes were down.
    drill.notes["restarted"] = time.monotonic()
    if await drill.edit():
        drill.notes["restarted"] = drill.timeline.changes[-1][0]
    drill.end_fault()


def _recovery(drill: Drill, region: str) -> float | None:
    if "restarted" not in drill.notes:
        return None
    holdings = (v.holding for v in drill.views if v.region == region)
    return fleet_caught_up(drill.timeline, holdings, float(drill.notes["restarted"]))


def comparison(drill: Drill) -> dict[str, Any]:
    ready: dict[str, float] = drill.notes.get("ready_after_s", {})
    rows: list[list[Any]] = [
        ["clients", *(sum(v.region == n for v in drill.views) for n, _ in ARMS)],
        ["node answering after the kill (s)", *(ready.get(n) for n, _ in ARMS)],
        [
            "every client current after the edit made as the nodes answered (s)",
            *(_rounded(_recovery(drill, n)) for n, _ in ARMS),
        ],
    ]
    return {"columns": ["figure", *(label for _, label in ARMS)], "rows": rows}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def checks(report: Mapping[str, Any], drill: Drill) -> list[Check]:
    found = [served_throughout(report)]
    for region, label in ARMS:
        found.append(
            current_within(
                RECOVERY_BOUND_S,
                _recovery(drill, region),
                f"after the restart {label} (region {region.upper()})",
                drill.waited_for(drill.notes.get("restarted"), region),
            )
        )
    found.append(no_event_lost(report))
    return found


SCENARIO = Scenario(
    name="cold-restart",
    summary="every delivery node restarted at once, A's from disk snapshots, B's without them",
    phases=(
        Phase("steady", 0.3),
        Phase(
            "restarted",
            0.7,
            restart_all,
            min_seconds=RECOVERY_BOUND_S + 2.0,
            until=Drill.recovered,
        ),
    ),
    checks=checks,
    compare=comparison,
)
