"""`flagstaff serve` refuses OTEL_* values it cannot honour before it starts anything: one line
naming the variable, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from flagstaff_server.cli import main


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            },
            "flagstaff serve: OTEL_EXPORTER_OTLP_PROTOCOL: Flagstaff exports OTLP as "
            "'http/protobuf' only, got 'grpc'",
        ),
        (
            {"OTEL_METRICS_EXPORTER": "prometheus"},
            "flagstaff serve: OTEL_METRICS_EXPORTER: Flagstaff exports 'otlp' or 'none', "
            "got 'prometheus'",
        ),
    ],
)
def test_serve_refuses_otel_values_it_cannot_honour_in_one_line(
    variables: dict[str, str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    code = main(["serve", "--data-dir", str(tmp_path), "--port", "0", "--no-demo"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == message
    assert not any(tmp_path.iterdir())  # nothing started, nothing written
