"""`flagstaff gameday ingestion-outage` at a small size: the analytics store stopped, then
region A's ingest node SIGKILLed (senders fail over to B), then both back; events acknowledged
meanwhile (journalled on disk) all reach the store, none twice."""

from __future__ import annotations

from pathlib import Path

from gameday_support import GAMEDAY, failed_checks, run_gameday

pytestmark = GAMEDAY


def test_an_ingestion_outage_loses_no_acknowledged_event_and_counts_none_twice(
    tmp_path: Path,
) -> None:
    done, report = run_gameday(tmp_path, "ingestion-outage", duration=5.0)

    assert failed_checks(report) == [], report["checks"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p["name"] for p in report["phases"]] == [
        "steady",
        "store down",
        "ingest killed",
        "restored",
    ]
    events = report["events"]
    assert events["acknowledged"] == events["sent"] > 0
    assert (events["lost"], events["duplicated"]) == (0, 0)
    assert report["availability_had_data"] == 1.0
