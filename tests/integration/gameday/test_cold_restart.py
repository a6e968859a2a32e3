"""`flagstaff gameday cold-restart` at a small size: both regions' delivery nodes SIGKILLed at
once and restarted, from their disk snapshots and then with the snapshots removed; every client
keeps evaluating from data and is current within 10 s of each restart; no event is lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from gameday_support import failed_checks, run_gameday

pytestmark = [pytest.mark.service, pytest.mark.slow]


def test_cold_restart_of_every_delivery_node_keeps_clients_served_and_current(
    tmp_path: Path,
) -> None:
    # four phases: the last must outlast the 10 s recovery bound
    done, report = run_gameday(tmp_path, "cold-restart", duration=20.0)

    assert failed_checks(report) == [], report["checks"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["availability_had_data"] == 1.0
    assert [p["name"] for p in report["phases"]] == [
        "steady",
        "restarted from disk",
        "restarted without snapshots",
        "settled",
    ]
    # the restarts were real: the streaming clients lost their connections
    assert report["connection_errors"] > 0
    events = report["events"]
    assert (events["lost"], events["duplicated"]) == (0, 0)
