"""`flagstaff gameday flag-change-during-outage` at a small size: with region A SIGKILLed whole
(its traffic moved to B) and nothing promoted, the probe flag is killed through the break-glass
path; B's delivery node accepts and every client serves the kill within 10 s; the clear reaches
every client too, and no event is lost."""

from __future__ import annotations

from pathlib import Path

from gameday_support import GAMEDAY, failed_checks, run_gameday

pytestmark = GAMEDAY


def test_a_break_glass_kill_while_region_a_is_down_reaches_every_client(tmp_path: Path) -> None:
    done, report = run_gameday(tmp_path, "flag-change-during-outage", duration=8.0)

    assert failed_checks(report) == [], report["checks"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p["name"] for p in report["phases"]] == [
        "steady",
        "A lost, flag killed",
        "kill cleared",
        "A's ingest back",
    ]
    assert report["availability_had_data"] == 1.0
    assert report["recovery_s"] is not None
    events = report["events"]
    assert (events["lost"], events["duplicated"]) == (0, 0)
