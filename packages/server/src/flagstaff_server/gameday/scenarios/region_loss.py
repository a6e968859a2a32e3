"""`region-loss`: region A dies whole (API, delivery and ingest nodes SIGKILLed, its PostgreSQL
primary killed) and its traffic moves to region B, whose delivery node serves everyone from its
standby; edits are refused meanwhile. Then B's standby is promoted (what the operator's
`flagstaff dr promote` does) and edits resume through B's API, which ran on the standby all
along and takes writes with no restart. Every client must keep evaluating from data and be
current within 10 s of the first edit B accepted.

Measured: RTO (from the loss to the first edit B accepted) and RPO (edits A accepted that the
promoted database does not hold, and how many seconds of edits that is).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
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
from flagstaff_server.gameday.topology import PROBE_FLAG, PROJECT

RECOVERY_BOUND_S = 10.0
RESUME_SECONDS = 60.0
"""How long edits through B's API may take to be accepted after the promotion."""


def _promote(database_url: str, data_dir: Path) -> tuple[bool, str]:
    """What `flagstaff dr promote --database URL --region b` does (pg_promote, the new epoch,
    the primary's region recorded), in this process: a CLI process of its own spent most of a
    minute importing on a loaded machine, which is not the failover's time."""
    from flagstaff_server.adapters.clock import system_clock
    from flagstaff_server.commands.dr import open_database
    from flagstaff_server.services import failover

    args = argparse.Namespace(database=database_url, data_dir=data_dir)
    try:
        store = open_database(args, migrate=False, region="b")
        try:
            promotion = failover.promote(store, region="b", clock=system_clock)
        finally:
            store.close()
    except Exception as exc:  # reported as the check's detail
        return False, f"{type(exc).__name__}: {exc}"
    return True, f"promoted: {promotion.promoted}, role {promotion.state.role}"


def _held_value(drill: Drill) -> str | None:
    """What the probe flag's variation 0 holds in the (promoted) database, read through B."""
    with drill.topology.api() as api:
        response = api.get(f"/api/v2/flags/{PROJECT}/{PROBE_FLAG}")
    if response.status_code != 200:
        return None
    return str(response.json()["variations"][0]["value"])


async def promote_b(drill: Drill) -> None:
    topology = drill.topology
    promoted, output = await asyncio.to_thread(
        _promote, topology.b.database.url, topology.root / "dr"
    )
    drill.notes["promoted"] = promoted
    drill.notes["promote_output"] = output
    topology.writer = "b"
    drill.notes["held_after_promotion"] = await asyncio.to_thread(_held_value, drill)
    ends = time.monotonic() + RESUME_SECONDS
    while time.monotonic() < ends:
        if await drill.edit():
            drill.notes["resumed"] = drill.timeline.changes[-1][0]
            break
        await asyncio.sleep(0.2)
    drill.end_fault()


def _number(value: object) -> int:
    text = str(value)
    return int(text[1:]) if text.startswith("v") and text[1:].isdigit() else 0


def objectives(drill: Drill) -> dict[str, Any]:
    """RTO and RPO of the run (null where not reached)."""
    lost_at = float(drill.notes.get("lost", 0.0))
    resumed = drill.notes.get("resumed")
    on_a = _number(drill.notes.get("last_accepted_on_a"))
    held = drill.notes.get("held_after_promotion")
    lost_edits = None if held is None else max(0, on_a - _number(held))
    times = {value: t for t, value in drill.timeline.changes}
    rpo_s = None
    if lost_edits is not None:
        first_lost = times.get(f"v{_number(held) + 1}")
        rpo_s = 0.0 if lost_edits == 0 or first_lost is None else round(lost_at - first_lost, 2)
    return {
        "rto_s": None if resumed is None else round(float(resumed) - lost_at, 2),
        "rpo_edits": lost_edits,
        "rpo_s": rpo_s,
    }


def comparison(drill: Drill) -> dict[str, Any]:
    found = objectives(drill)
    rows: list[list[Any]] = [
        ["RTO: loss of A to the first edit B accepted (s)", found["rto_s"]],
        ["RPO: edits A accepted that B's database lacks", found["rpo_edits"]],
        ["RPO: seconds of edits lost", found["rpo_s"]],
        ["edits refused while A was lost", drill.edits_refused],
    ]
    return {"columns": ["figure", "region-loss"], "rows": rows}


def checks(report: Mapping[str, Any], drill: Drill) -> list[Check]:
    found = objectives(drill)
    return [
        served_throughout(report),
        refused_while_lost(drill),
        Check(
            "B promoted",
            drill.notes.get("promoted") is True,
            str(drill.notes.get("promote_output", ""))[:200],
        ),
        Check(
            "edits resumed on B",
            found["rto_s"] is not None,
            f"first edit accepted by B {found['rto_s']} s after A was lost",
        ),
        current_within(RECOVERY_BOUND_S, report["recovery_s"], "after B took the first edit"),
        no_event_lost(report),
    ]


SCENARIO = Scenario(
    name="region-loss",
    summary="region A dies; B serves; B is promoted and edits resume there",
    phases=(
        Phase("steady", 0.25),
        Phase("region A lost", 0.35, lose_region_a, min_seconds=3.0),
        Phase(
            "B promoted",
            0.4,
            promote_b,
            min_seconds=RECOVERY_BOUND_S + 2.0,
            until=Drill.recovered,
        ),
        Phase("A's ingest back", 0.0, a_ingest_returns),
    ),
    checks=checks,
    compare=comparison,
    standby_api=True,
)
