"""`control-plane-down`: region A's API is SIGKILLed and both PostgreSQL servers are stopped
(A's primary killed, B's standby stopped). Delivery in both regions keeps serving from memory;
an emergency kill of the probe flag goes through the break-glass path to both delivery nodes
and must reach every client; then the database and the API come back, the kill is cleared, and
edits reach every client again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from flagstaff_server.gameday.scenario import (
    Check,
    Drill,
    Phase,
    Scenario,
    no_event_lost,
    served_throughout,
)
from flagstaff_server.gameday.topology import KILLED


async def control_plane_goes(drill: Drill) -> None:
    topology = drill.topology
    drill.begin_fault()
    assert topology.a.api is not None
    await asyncio.to_thread(topology.a.api.kill)
    await asyncio.to_thread(topology.a.database.kill)
    await asyncio.to_thread(topology.b.database.stop)
    drill.notes["edit_while_down"] = await drill.edit()
    drill.notes["kill_accepted"] = await drill.kill_probe()


async def control_plane_returns(drill: Drill) -> None:
    topology = drill.topology
    drill.notes["outage_ended"] = time.monotonic()
    drill.notes["killed_at_outage_end"] = drill.holding_at_end_of(KILLED, time.monotonic())
    await asyncio.to_thread(topology.a.database.start)
    await asyncio.to_thread(topology.b.database.start)
    assert topology.a.api is not None
    await asyncio.to_thread(topology.a.api.start)
    drill.notes["clear_accepted"] = await drill.clear_kill()
    drill.end_fault()
    await drill.edit()


def checks(report: Mapping[str, Any], drill: Drill) -> list[Check]:
    clients = len(drill.views)
    killed = int(drill.notes.get("killed_at_outage_end", 0))
    accepted = drill.notes.get("kill_accepted", {})
    return [
        served_throughout(report),
        Check(
            "edits refused while the API is down",
            drill.notes.get("edit_while_down") is False,
            f"an edit during the outage: {drill.notes.get('edit_while_down')} (True: accepted)",
        ),
        Check(
            "break-glass kill accepted by both regions",
            bool(accepted) and all(accepted.values()),
            f"accepted: {accepted}",
        ),
        Check(
            "the kill reached every client during the outage",
            killed == clients,
            f"{killed} of {clients} clients served the flag killed before the database returned",
        ),
        Check(
            "every client current after recovery",
            report["recovery_s"] is not None,
            f"recovery {report['recovery_s']} s after the control plane returned",
        ),
        no_event_lost(report),
    ]


SCENARIO = Scenario(
    name="control-plane-down",
    summary="API and database gone: delivery keeps serving and the break-glass kill works",
    phases=(
        Phase("steady", 0.3),
        Phase("control plane down", 0.4, control_plane_goes),
        Phase("recovered", 0.3, control_plane_returns),
    ),
    checks=checks,
)
