"""The full-size table: one row per scenario, read from the `report.json` files under a
directory (`make gameday` writes one per scenario), as Markdown to paste into the README.
Figures are read, never typed: `python -m flagstaff_server.gameday.summary DIR`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

COLUMNS = (
    "scenario",
    "clients",
    "availability (had data)",
    "staleness p99",
    "propagation p99",
    "recovery",
    "errors",
    "sheds",
    "events lost / dup",
    "load avg",
    "passed",
)


def _seconds(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.2f} s"


def row(report: Mapping[str, Any]) -> list[str]:
    """One scenario's cells; a failed check is named beside `no`."""
    events = report.get("events") or {}
    recovery = report.get("recovery_s")
    load = report.get("load_average") or {}
    had_data = report.get("clients_with_data_at_fault")
    of = "" if had_data is None else f" of {had_data:,}"
    failed = [c["name"] for c in report.get("checks", []) if not c.get("passed")]
    passed = "yes" if report.get("passed") else "no"
    if failed:
        passed += f" ({'; '.join(failed)})"
    return [
        str(report.get("scenario", "?")),
        f"{report.get('clients', 0):,}",
        f"{100 * float(report.get('availability_had_data', 0.0)):.4f}%{of}",
        _seconds((report.get("staleness_ms") or {}).get("p99")),
        _seconds(report.get("propagation_ms_p99")),
        "never" if recovery is None else f"{recovery:.2f} s",
        f"{report.get('connection_errors', 0):,}",
        f"{report.get('sheds', 0):,}",
        f"{events.get('lost', '?')} / {events.get('duplicated', '?')}",
        f"{load.get('start', '?')}-{load.get('end', '?')}",
        passed,
    ]


def table(reports: Sequence[Mapping[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(r)) + " |" for r in reports]
    return "\n".join(lines) + "\n"


def reports_under(directory: Path) -> list[dict[str, Any]]:
    """Every `report.json` one level under `directory`, in the order of their names."""
    found = sorted(directory.glob("*/report.json"))
    return [json.loads(path.read_text()) for path in found]


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python -m flagstaff_server.gameday.summary REPORTS_DIR", file=sys.stderr)
        return 2
    reports = reports_under(Path(argv[0]))
    if not reports:
        print(f"no */report.json under {argv[0]}", file=sys.stderr)
        return 1
    sys.stdout.write(table(reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
