"""The full-size table is read from the reports, one row per scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flagstaff_server.gameday.summary import main, reports_under, table


def report(scenario: str, *, passed: bool, recovery: float | None) -> dict[str, object]:
    return {
        "scenario": scenario,
        "clients": 5003,
        "availability_had_data": 0.999875,
        "clients_with_data_at_fault": 4998,
        "staleness_ms": {"p50": 0.0, "p99": 1234.5, "max": 9000.0},
        "propagation_ms_p99": 850.0,
        "recovery_s": recovery,
        "connection_errors": 12000,
        "sheds": 340,
        "events": {"lost": 0, "duplicated": 1},
        "load_average": {"start": 3.2, "end": 7.9},
        "passed": passed,
        "checks": [
            {"name": "served throughout", "passed": True, "detail": ""},
            {"name": "current within 10 s", "passed": passed, "detail": ""},
        ],
    }


def test_one_row_per_report_in_name_order_with_the_failed_checks_named(tmp_path: Path) -> None:
    for name, each in (
        ("reconnect-storm", report("reconnect-storm", passed=False, recovery=None)),
        ("cold-restart", report("cold-restart", passed=True, recovery=4.5)),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text(json.dumps(each))
    lines = table(reports_under(tmp_path)).splitlines()
    assert len(lines) == 4
    assert lines[2] == (
        "| cold-restart | 5,003 | 99.9875% of 4,998 | 1.23 s | 0.85 s | 4.50 s | 12,000 | 340 "
        "| 0 / 1 | 3.2-7.9 | yes |"
    )
    assert lines[3].startswith("| reconnect-storm |")
    assert "| never |" in lines[3]
    assert lines[3].endswith("| no (current within 10 s) |")


def test_main_refuses_a_directory_without_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 1
    assert main([str(tmp_path / "absent")]) == 2
    assert "usage" in capsys.readouterr().err
