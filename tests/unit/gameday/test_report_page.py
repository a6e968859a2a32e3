"""The game-day report from recorded samples: totals, propagation and recovery from the client
histories, and a static HTML page whose charts are inline SVG (no script, nothing fetched)."""

from __future__ import annotations

import json
from pathlib import Path

from flagstaff_server.gameday.event_fleet import EventLedger
from flagstaff_server.gameday.fleet import ClientView
from flagstaff_server.gameday.recorder import Recorder
from flagstaff_server.gameday.report import NodeFigures, PhaseSpan, figures
from flagstaff_server.gameday.report_page import html_page, write_report
from flagstaff_server.gameday.timeline import Timeline


def recorded() -> Recorder:
    line = Timeline()
    line.record(100.0, "v0")
    line.record(102.0, "v1")
    fast, slow, empty = (ClientView(name=n, kind="fdv1-stream", region="a") for n in "fse")
    fast.holding.hold(100.0, "v0")
    slow.holding.hold(100.0, "v0")
    recorder = Recorder(
        started=100.0, timeline=line, views=[fast, slow, empty], ledger=EventLedger()
    )
    fast.value = slow.value = "v0"
    recorder.sample(101.0, "steady")
    recorder.mark_fault(101.5, {"f", "s"})
    fast.value = "v1"
    fast.holding.hold(102.5, "v1")
    recorder.sample(103.0, "fault")
    slow.value = empty.value = "v1"
    slow.holding.hold(104.0, "v1")
    empty.holding.hold(104.0, "v1")
    recorder.sample(104.5, "recovered")
    return recorder


def report() -> dict[str, object]:
    recorder = recorded()
    body = figures(
        scenario="example",
        clients=3,
        duration_s=4.5,
        seed=1,
        recorder=recorder,
        recovery_s=recorder.recovery_seconds(3.0),
        events={"sent": 10, "acknowledged": 10, "lost": 0, "duplicated": 0},
        nodes=[NodeFigures("a-delivery", 1 << 27, 12.5, 3.0)],
        phases=[
            PhaseSpan("steady", 0, 1.5),
            PhaseSpan("fault", 1.5, 3),
            PhaseSpan("recovered", 3, 4.5),
        ],
        interrupted=False,
    )
    body["checks"] = [{"name": "something held", "passed": True, "detail": "it did <ok>"}]
    body["passed"] = True
    return body


def test_figures_come_from_the_samples_and_the_histories() -> None:
    body = report()
    # 9 evaluations, the client without data served the default twice
    assert body["availability"] == round(7 / 9, 6)
    # the clients with data before the fault kept it
    assert body["availability_had_data"] == 1.0
    # v1 reached f 0.5 s and s 2 s after it was asked for; v0 was held from the start
    assert body["propagation_ms_p99"] == 2000.0
    # every client had v1 (expected at 103) 1 s after the fault ended
    assert body["recovery_s"] == 1.0
    assert body["staleness_ms"] == {"p50": 0.0, "p99": 1000.0, "max": 1000.0}


def test_the_page_has_inline_svg_charts_and_nothing_to_fetch(tmp_path: Path) -> None:
    body = report()
    page = html_page(body)
    assert page.count("<svg") == 5
    assert "<script" not in page
    assert "src=" not in page
    assert "href=" not in page
    assert "it did &lt;ok&gt;" in page
    json_path, html_path = write_report(body, tmp_path)
    assert json.loads(json_path.read_text())["scenario"] == "example"
    assert html_path.read_text() == page


def test_a_side_by_side_table_is_on_the_page_when_the_report_has_one() -> None:
    body = report()
    assert 'id="comparison"' not in html_page(body)
    body["comparison"] = {
        "columns": ["figure", "with", "without"],
        "rows": [["shed <503>", 4, 0], ["ready after (s)", 1.5, None]],
    }

    page = html_page(body)

    assert '<table id="comparison">' in page
    assert "<td>shed &lt;503&gt;</td><td>4</td><td>0</td>" in page
    assert "<td>ready after (s)</td><td>1.5</td><td>n/a</td>" in page
