"""The game-day scenarios, one module each, in the order of the incident's phases they replay;
`SCENARIOS` maps each name to its definition."""

from __future__ import annotations

from flagstaff_server.gameday.scenario import Scenario
from flagstaff_server.gameday.scenarios import (
    cold_restart,
    control_plane_down,
    flag_change_during_outage,
    ingestion_outage,
    legacy_path,
    reconnect_storm,
    region_loss,
    streaming_blocked,
)

SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        region_loss.SCENARIO,
        control_plane_down.SCENARIO,
        cold_restart.SCENARIO,
        reconnect_storm.SCENARIO,
        streaming_blocked.SCENARIO,
        flag_change_during_outage.SCENARIO,
        ingestion_outage.SCENARIO,
        legacy_path.SCENARIO,
    )
}
