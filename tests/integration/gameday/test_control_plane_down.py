"""`flagstaff gameday control-plane-down` at a small size: with region A's API SIGKILLed and
both PostgreSQL servers down, every client (protocol clients in both regions and the real SDKs)
keeps evaluating from flag data, the break-glass kill reaches all of them, no acknowledged
event is lost or counted twice, and once the control plane is back every client is current."""

from __future__ import annotations

from pathlib import Path

from gameday_support import GAMEDAY, failed_checks, run_gameday

pytestmark = GAMEDAY


def test_control_plane_down_keeps_every_client_served_and_the_kill_reaches_them(
    tmp_path: Path,
) -> None:
    done, report = run_gameday(tmp_path, "control-plane-down", duration=10.0)

    assert failed_checks(report) == [], report["checks"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["passed"] is True
    # 10 protocol clients and the three real SDKs
    assert report["clients"] == 13
    assert report["availability_had_data"] == 1.0
    assert report["recovery_s"] is not None
    events = report["events"]
    assert events["acknowledged"] > 0
    assert (events["lost"], events["duplicated"]) == (0, 0)
    assert [p["name"] for p in report["phases"]] == ["steady", "control plane down", "recovered"]
    names = {node["name"] for node in report["nodes"]}
    assert names == {"a-api", "a-delivery", "a-ingest", "b-delivery", "b-ingest"}
    assert all(node["peak_rss_bytes"] > 0 for node in report["nodes"])
    html = (tmp_path / "report" / "report.html").read_text()
    assert html.count("<svg") == 5
