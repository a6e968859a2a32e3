"""`flagstaff gameday streaming-blocked` at a small size: both delivery proxies reset every
long-lived stream while passing polls; streaming clients poll instead, are sent changes and trail
the pollers by at most one stream backoff, then stream again once streams pass, and every
client is current within 10 s."""

from __future__ import annotations

from pathlib import Path

from gameday_support import GAMEDAY, failed_checks, run_gameday

pytestmark = GAMEDAY


def test_blocked_streams_fall_back_to_polling_and_stream_again(tmp_path: Path) -> None:
    done, report = run_gameday(tmp_path, "streaming-blocked", duration=8.0)

    assert failed_checks(report) == [], report["checks"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p["name"] for p in report["phases"]] == ["steady", "streams blocked", "streams pass"]
    assert report["availability_had_data"] == 1.0
    # the block was real: every stream attempt through the proxies was reset
    assert report["connection_errors"] > 0
    assert report["recovery_s"] is not None
    events = report["events"]
    assert (events["lost"], events["duplicated"]) == (0, 0)
