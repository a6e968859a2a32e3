"""`flagstaff gameday legacy-path` at a small size: each region's traffic moved at once to a
delivery node started empty while clients retry; region A's new node runs with admission
control and sheds the full-payload storm with Retry-After, region B's runs without it and sends
everything at once; the report puts the two side by side."""

from __future__ import annotations

from pathlib import Path

from gameday_support import GAMEDAY, failed_checks, run_gameday

pytestmark = GAMEDAY


def test_moving_traffic_to_an_empty_node_is_shed_with_admission_and_not_without(
    tmp_path: Path,
) -> None:
    # 20 protocol clients, as in reconnect-storm: A's storm is larger than its bucket
    done, report = run_gameday(tmp_path, "legacy-path", clients=20, duration=5.0)

    assert failed_checks(report) == [], report["checks"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["availability_had_data"] == 1.0
    table = report["comparison"]
    assert table["columns"] == ["figure", "with admission control", "without admission control"]
    rows = {row[0]: row[1:] for row in table["rows"]}
    with_admission, without = rows["shed: full-payload rate (503 + Retry-After)"]
    assert with_admission > 0
    assert without == 0
    # both new nodes served the moved clients their data in full
    assert all(sent > 0 for sent in rows["full payloads sent"])
    html = (tmp_path / "report" / "report.html").read_text()
    assert 'id="comparison"' in html
    events = report["events"]
    assert (events["lost"], events["duplicated"]) == (0, 0)
