"""`flagstaff gameday cold-restart` at a small size: both regions' delivery nodes SIGKILLed at
once and restarted, A's from its disk snapshots and B's with its snapshots removed; every client
keeps evaluating from data and each region's clients are current within 10 s; no event is
lost."""

from __future__ import annotations

from pathlib import Path

from gameday_support import GAMEDAY, failed_checks, run_gameday

pytestmark = GAMEDAY


def test_cold_restart_of_every_delivery_node_keeps_clients_served_and_current(
    tmp_path: Path,
) -> None:
    # the restarted phase ends once every client is current (within its 12 s bound)
    done, report = run_gameday(tmp_path, "cold-restart", duration=8.0)

    assert failed_checks(report) == [], report["checks"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["availability_had_data"] == 1.0
    assert [p["name"] for p in report["phases"]] == ["steady", "restarted"]
    table = report["comparison"]
    assert table["columns"] == ["figure", "from disk snapshots", "without snapshots"]
    rows = {row[0]: row[1:] for row in table["rows"]}
    # both arms answered again and their clients caught up
    assert all(seconds > 0 for seconds in rows["node answering after the kill (s)"])
    caught_up = rows["every client current after the edit made as the nodes answered (s)"]
    assert all(seconds is not None and seconds <= 10.0 for seconds in caught_up)
    # the restarts were real: the streaming clients lost their connections
    assert report["connection_errors"] > 0
    events = report["events"]
    assert (events["lost"], events["duplicated"]) == (0, 0)
