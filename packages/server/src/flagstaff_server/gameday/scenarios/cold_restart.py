"""`cold-restart`: every delivery node (both regions) is SIGKILLed at once and started again,
first from its disk snapshots, then a second time with its snapshot directory removed (it must
load everything from the database). Clients keep their data through both; each restart must
leave every client current within 10 s of the nodes answering again.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Mapping
from typing import Any

from flagstaff_server.gameday.scenario import Check, Drill, Phase, Scenario
from flagstaff_server.gameday.timeline import caught_up_at

RECOVERY_BOUND_S = 10.0
SDK_BACKOFF_RESET_S = 60.0
"""LaunchDarkly's SDKs reset their reconnect backoff only after a stream has been healthy this
long. A second restart sooner would measure the delay left over from the first (seen: the
official Python SDK ~12 s behind after two restarts 10 s apart), not what the nodes did, so the
second restart waits for it; the first restart's phase lasts that long and a little more."""


async def _restart_all(drill: Drill, *, snapshots: bool, label: str) -> None:
    nodes = [drill.topology.a.delivery, drill.topology.b.delivery]
    drill.driving = False  # no edit in flight while the nodes are down
    if drill.fault_began is None:
        drill.begin_fault()
    await asyncio.gather(*(asyncio.to_thread(node.kill) for node in nodes))
    if not snapshots:
        for node in nodes:
            shutil.rmtree(node.data_dir / "delivery", ignore_errors=True)
    for node in nodes:
        node.launch()
    await asyncio.gather(*(asyncio.to_thread(node.wait_ready) for node in nodes))
    drill.notes[label] = time.monotonic()
    drill.driving = True
    # A change right after the restart must reach everyone: recovery is measured from it, since
    # clients already hold the value that was current while the nodes were down.
    if await drill.edit():
        drill.notes[label] = drill.timeline.changes[-1][0]


async def restart_from_disk(drill: Drill) -> None:
    await _restart_all(drill, snapshots=True, label="restarted_from_disk")


async def restart_without_snapshots(drill: Drill) -> None:
    await _restart_all(drill, snapshots=False, label="restarted_empty")


async def settle(drill: Drill) -> None:
    drill.end_fault()


def _recovery(drill: Drill, label: str) -> float | None:
    if label not in drill.notes:
        return None
    since = float(drill.notes[label])
    caught = [caught_up_at(drill.timeline, v.holding, since) for v in drill.views]
    if any(t is None for t in caught):
        return None
    return max(t - since for t in caught if t is not None)


def checks(report: Mapping[str, Any], drill: Drill) -> list[Check]:
    events = report["events"]
    found = [
        Check(
            "evaluations served from data throughout",
            report["availability_had_data"] == 1.0,
            f"availability {report['availability_had_data']:.4f} for clients with data before",
        )
    ]
    for label, name in (
        ("restarted_from_disk", "restart from disk snapshots"),
        ("restarted_empty", "restart without snapshots"),
    ):
        recovery = _recovery(drill, label)
        found.append(
            Check(
                f"every client current within {RECOVERY_BOUND_S:g} s after the {name}",
                recovery is not None and recovery <= RECOVERY_BOUND_S,
                f"{'never' if recovery is None else f'{recovery:.2f} s'}"
                " after the edit made as the nodes answered",
            )
        )
    found.append(
        Check(
            "no event lost or counted twice",
            events["lost"] == 0 and events["duplicated"] == 0,
            f"{events['acknowledged']} acknowledged, {events['lost']} lost, "
            f"{events['duplicated']} duplicated",
        )
    )
    return found


SCENARIO = Scenario(
    name="cold-restart",
    summary="every delivery node restarted at once, from disk snapshots and without them",
    phases=(
        Phase("steady", 0.25),
        Phase(
            "restarted from disk",
            0.25,
            restart_from_disk,
            min_seconds=SDK_BACKOFF_RESET_S + RECOVERY_BOUND_S,
        ),
        Phase("restarted without snapshots", 0.25, restart_without_snapshots),
        Phase("settled", 0.25, settle, min_seconds=RECOVERY_BOUND_S),
    ),
    checks=checks,
)
