"""The game-day report as files and as text: `report.json` (the figures), `report.html` (a
static page with the figures, the checks and SVG charts over time; no script, nothing
fetched) and the terminal summary (rich).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from flagstaff_server.gameday.plot import line_chart


def _phases(report: Mapping[str, Any]) -> list[tuple[str, float, float]]:
    return [(p["name"], p["start_s"], p["end_s"]) for p in report["phases"]]


def charts(report: Mapping[str, Any]) -> list[str]:
    series = report["series"]
    t, phases = series["t"], _phases(report)
    return [
        line_chart(
            "evaluation availability (share served from flag data)",
            t,
            [("availability", series["availability"])],
            phases=phases,
            y_max=1.05,
        ),
        line_chart(
            "staleness (ms)",
            t,
            [("p99", series["stale_p99_ms"]), ("max", series["stale_max_ms"])],
            phases=phases,
        ),
        line_chart("streaming connections", t, [("connected", series["connected"])], phases=phases),
        line_chart(
            "connection errors and sheds (cumulative)",
            t,
            [("errors", series["errors"]), ("sheds", series["sheds"])],
            phases=phases,
        ),
        line_chart(
            "events (cumulative)",
            t,
            [("sent", series["events_sent"]), ("acknowledged", series["events_acknowledged"])],
            phases=phases,
        ),
    ]


def totals(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    stale, events = report["staleness_ms"], report["events"]
    recovery = report["recovery_s"]
    return [
        ("clients", str(report["clients"])),
        ("duration", f"{report['duration_s']} s"),
        ("availability", f"{report['availability']:.4%}"),
        (
            "availability (clients with data before the fault)",
            f"{report['availability_had_data']:.4%}",
        ),
        ("staleness p50 / p99 / max", f"{stale['p50']} / {stale['p99']} / {stale['max']} ms"),
        ("propagation p99", f"{report['propagation_ms_p99']} ms"),
        ("recovery", "never" if recovery is None else f"{recovery} s"),
        ("connection errors", str(report["connection_errors"])),
        ("sheds", str(report["sheds"])),
        (
            "events sent / acknowledged / lost / duplicated",
            " / ".join(str(events[k]) for k in ("sent", "acknowledged", "lost", "duplicated")),
        ),
    ]


def _cell(value: Any) -> str:
    return "n/a" if value is None else str(value)


def comparison_html(report: Mapping[str, Any]) -> str:
    """The scenario's side-by-side table (two runs, two arms), when it has one."""
    table = report.get("comparison")
    if not table:
        return ""
    head = "".join(f"<th>{escape(str(c))}</th>" for c in table["columns"])
    rows = "".join(
        "<tr>" + "".join(f"<td>{escape(_cell(v))}</td>" for v in row) + "</tr>"
        for row in table["rows"]
    )
    return f'<h2>Side by side</h2><table id="comparison"><tr>{head}</tr>{rows}</table>'


def html_page(report: Mapping[str, Any]) -> str:
    verdict = "passed" if report["passed"] else "FAILED"
    rows = "".join(
        f"<tr><th>{escape(name)}</th><td>{escape(value)}</td></tr>"
        for name, value in totals(report)
    )
    checks = "".join(
        f'<tr class="{"ok" if c["passed"] else "bad"}"><td>{"pass" if c["passed"] else "FAIL"}</td>'
        f"<td>{escape(c['name'])}</td><td>{escape(c['detail'])}</td></tr>"
        for c in report["checks"]
    )
    nodes = "".join(
        f"<tr><td>{escape(n['name'])}</td><td>{n['peak_rss_bytes'] / 2**20:.1f} MiB</td>"
        f"<td>{n['peak_cpu_percent']}%</td><td>{n['cpu_seconds']} s</td></tr>"
        for n in report["nodes"]
    )
    figures = "".join(f"<figure>{svg}</figure>" for svg in charts(report))
    interrupted = (
        "<p><strong>Interrupted: partial run.</strong></p>" if report["interrupted"] else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Game day: {escape(report["scenario"])}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 70em; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }}
tr.ok td:first-child {{ color: #2a7a2a; }}
tr.bad td:first-child {{ color: #b00; font-weight: bold; }}
figure {{ margin: 0 0 1em 0; }}
</style></head><body>
<h1>Game day: {escape(report["scenario"])} — <span id="verdict">{verdict}</span></h1>
{interrupted}
<h2>Totals</h2><table id="totals">{rows}</table>
<h2>Checks</h2><table id="checks"><tr><th></th><th>check</th><th>detail</th></tr>{checks}</table>
{comparison_html(report)}
<h2>Over time</h2>{figures}
<h2>Nodes</h2><table id="nodes">
<tr><th>node</th><th>peak RSS</th><th>peak CPU</th><th>CPU time</th></tr>{nodes}</table>
</body></html>
"""


def write_report(report: Mapping[str, Any], directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    json_path, html_path = directory / "report.json", directory / "report.html"
    json_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    html_path.write_text(html_page(report), encoding="utf-8")
    return json_path, html_path


def print_summary(report: Mapping[str, Any], console: Console, paths: Sequence[Path]) -> None:
    table = Table(
        title=f"game day {report['scenario']}: {'passed' if report['passed'] else 'FAILED'}"
    )
    table.add_column("figure")
    table.add_column("value")
    for name, value in totals(report):
        table.add_row(name, value)
    for check in report["checks"]:
        mark = "[green]pass[/]" if check["passed"] else "[red]FAIL[/]"
        table.add_row(f"{mark} {check['name']}", check["detail"])
    console.print(table)
    if report.get("comparison"):
        side = Table(title="side by side")
        columns = report["comparison"]["columns"]
        for column in columns:
            side.add_column(str(column))
        for row in report["comparison"]["rows"]:
            side.add_row(*(_cell(v) for v in row))
        console.print(side)
    for path in paths:
        console.print(f"wrote {path}")
