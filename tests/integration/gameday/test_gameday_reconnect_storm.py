"""`flagstaff gameday reconnect-storm` at a small size: both delivery proxies reset every
connection for a few seconds, then pass again and every client reconnects at once. The nodes'
full-payload rate is sized to the fleet, so admission control sheds part of the storm with
Retry-After; FDv2 clients resume from their basis; every client is current within 10 s."""

from __future__ import annotations

from pathlib import Path

from gameday_support import GAMEDAY, failed_checks, run_gameday

pytestmark = GAMEDAY


def test_reconnect_storm_is_shed_with_retry_after_and_every_client_catches_up(
    tmp_path: Path,
) -> None:
    # 20 protocol clients: each region's storm (4 full payloads and the official SDK's) is
    # larger than its bucket of 2 at 0.8 a second
    done, report = run_gameday(tmp_path, "reconnect-storm", clients=20, duration=5.0)

    assert failed_checks(report) == [], report["checks"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p["name"] for p in report["phases"]] == ["steady", "outage", "storm"]
    assert report["availability_had_data"] == 1.0
    assert report["sheds"] > 0
    assert report["recovery_s"] is not None
    assert report["recovery_s"] <= 10.0
    # the outage was real: every streaming client lost its connection
    assert report["connection_errors"] >= 20
    events = report["events"]
    assert (events["lost"], events["duplicated"]) == (0, 0)
