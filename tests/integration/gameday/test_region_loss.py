"""`flagstaff gameday region-loss` at a small size: region A SIGKILLed whole (its traffic moved
to B), B serving everyone from its standby while edits are refused, then B promoted with
`flagstaff dr promote` and edits resuming through B's API; every client current within 10 s
of the first edit B took; RTO and RPO in the report."""

from __future__ import annotations

from pathlib import Path

from gameday_support import GAMEDAY, failed_checks, run_gameday

pytestmark = GAMEDAY


def test_losing_region_a_b_serves_is_promoted_and_takes_the_edits(tmp_path: Path) -> None:
    done, report = run_gameday(tmp_path, "region-loss", duration=8.0)

    assert failed_checks(report) == [], report["checks"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p["name"] for p in report["phases"]] == [
        "steady",
        "region A lost",
        "B promoted",
        "A's ingest back",
    ]
    assert report["availability_had_data"] == 1.0
    rows = {row[0]: row[1] for row in report["comparison"]["rows"]}
    assert rows["RTO: loss of A to the first edit B accepted (s)"] > 0
    assert rows["RPO: edits A accepted that B's database lacks"] is not None
    assert rows["edits refused while A was lost"] > 0
    # the three real SDKs ran, the Node one (a child process) counted among the clients
    sdks = {sdk["name"]: sdk["served_at_end"] for sdk in report["real_sdks"]}
    assert sdks == {"sdk-flagstaff": True, "sdk-launchdarkly": True, "sdk-node": True}
    names = {node["name"] for node in report["nodes"]}
    assert "b-api" in names
    events = report["events"]
    assert (events["lost"], events["duplicated"]) == (0, 0)
