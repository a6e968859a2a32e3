"""`flag-change-during-outage`: region A dies whole, as in `region-loss` (its traffic moves to
B), and is not promoted away from: there is no API and no writable database anywhere. The
emergency kill of the probe flag goes through the break-glass path, signed with the operator's
key and pushed to both regions' delivery nodes: A's is dead and refuses nothing (it never
answers), B's accepts, and the kill must reach every client, all of them served by B now.
Then the kill is cleared the same way and every client serves the flag's last value again.
"""

from __future__ import annotations

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
from flagstaff_server.gameday.scenarios.region_steps import (
    a_ingest_returns,
    lose_region_a,
    refused_while_lost,
)
from flagstaff_server.gameday.topology import KILLED

RECOVERY_BOUND_S = 10.0
KILL_BOUND_S = 10.0


async def region_a_lost(drill: Drill) -> None:
    await lose_region_a(drill)
    drill.notes["kill_accepted"] = await drill.kill_probe()
    drill.notes["killed"] = drill.timeline.changes[-1][0]


def everyone_killed(drill: Drill) -> bool:
    return drill.caught_up_since(float(drill.notes["killed"])) is not None


async def kill_cleared(drill: Drill) -> None:
    since = float(drill.notes["killed"])
    drill.notes["kill_reached_all_s"] = drill.caught_up_since(since)
    drill.notes["clear_accepted"] = await drill.clear_kill()
    drill.driving = False  # no API anywhere: nothing to edit through
    drill.end_fault()


def checks(report: Mapping[str, Any], drill: Drill) -> list[Check]:
    accepted: dict[str, bool] = drill.notes.get("kill_accepted", {})
    cleared: dict[str, bool] = drill.notes.get("clear_accepted", {})
    reached = drill.notes.get("kill_reached_all_s")
    b_views = [v for v in drill.views if v.region == "b"]
    return [
        served_throughout(report),
        refused_while_lost(drill),
        Check(
            "break-glass kill accepted by B",
            accepted.get("b") is True,
            f"accepted: {accepted} (A is dead)",
        ),
        Check(
            f"the kill reached every client within {KILL_BOUND_S:g} s",
            reached is not None and reached <= KILL_BOUND_S,
            f"{'never' if reached is None else f'{reached:.2f} s'} after the kill was signed"
            f" ({len(b_views)} clients of B's own and {len(drill.views) - len(b_views)} moved"
            f" from A; the kill serves {KILLED!r})",
        ),
        Check("the clear accepted by B", cleared.get("b") is True, f"accepted: {cleared}"),
        current_within(RECOVERY_BOUND_S, report["recovery_s"], "after the kill was cleared"),
        no_event_lost(report),
    ]


SCENARIO = Scenario(
    name="flag-change-during-outage",
    summary="an emergency kill through the break-glass path while region A is down",
    phases=(
        Phase("steady", 0.3),
        Phase(
            "A lost, flag killed",
            0.4,
            region_a_lost,
            min_seconds=KILL_BOUND_S + 2.0,
            until=everyone_killed,
        ),
        Phase(
            "kill cleared",
            0.3,
            kill_cleared,
            min_seconds=RECOVERY_BOUND_S + 2.0,
            until=Drill.recovered,
        ),
        Phase("A's ingest back", 0.0, a_ingest_returns),
    ),
    checks=checks,
)
