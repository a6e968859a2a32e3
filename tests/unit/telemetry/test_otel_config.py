"""Which signals the server exports from the standard OTEL_* variables (off unless asked for), the
one-line errors for values it cannot honour, and how a SQL statement names its span."""

from __future__ import annotations

import pytest
from flagstaff_server.settings import SettingsError
from flagstaff_server.telemetry.otel_config import OtelConfig, otel_config
from flagstaff_server.telemetry.sql_tracing import statement_summary

ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}


def test_nothing_is_exported_without_variables() -> None:
    assert otel_config({}) == OtelConfig()
    assert not otel_config({"OTEL_SERVICE_NAME": "flags"}).enabled


def test_an_endpoint_turns_on_both_signals_and_a_signal_endpoint_only_its_own() -> None:
    assert otel_config(ENDPOINT) == OtelConfig(traces=True, metrics=True)
    only_traces = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}
    assert otel_config(only_traces) == OtelConfig(traces=True, metrics=False)


def test_exporter_variables_choose_per_signal() -> None:
    assert otel_config({**ENDPOINT, "OTEL_METRICS_EXPORTER": "none"}) == OtelConfig(traces=True)
    # the exporter's own default endpoint (localhost:4318) when only the exporter is named
    assert otel_config({"OTEL_TRACES_EXPORTER": "otlp"}) == OtelConfig(traces=True)
    assert otel_config({"OTEL_METRICS_EXPORTER": " OTLP "}) == OtelConfig(metrics=True)


def test_sdk_disabled_wins_over_everything() -> None:
    environ = {**ENDPOINT, "OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}
    assert otel_config(environ) == OtelConfig()


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"OTEL_TRACES_EXPORTER": "zipkin"},
            "OTEL_TRACES_EXPORTER: Flagstaff exports 'otlp' or 'none', got 'zipkin'",
        ),
        (
            {**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            "OTEL_EXPORTER_OTLP_PROTOCOL: Flagstaff exports OTLP as 'http/protobuf' only, "
            "got 'grpc'",
        ),
        (
            {**ENDPOINT, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json"},
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: Flagstaff exports OTLP as 'http/protobuf' "
            "only, got 'http/json'",
        ),
    ],
)
def test_values_flagstaff_cannot_honour_are_errors_naming_the_variable(
    environ: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        otel_config(environ)
    assert str(raised.value) == message


def test_a_protocol_variable_of_a_signal_not_exported_is_not_checked() -> None:
    environ = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc"}
    assert otel_config(environ) == OtelConfig(traces=True)


@pytest.mark.parametrize(
    ("statement", "summary"),
    [
        ("SELECT flags.key, flags.doc FROM flags WHERE flags.project = ?", ("SELECT", "flags")),
        ("INSERT INTO audit_log (id, at) VALUES (?, ?)", ("INSERT", "audit_log")),
        ('UPDATE "environments" SET version=? WHERE id = ?', ("UPDATE", "environments")),
        ("  delete from sessions where expires < ?", ("DELETE", "sessions")),
        ("BEGIN", ("BEGIN", None)),
        ("", (None, None)),
    ],
)
def test_a_statement_is_summarised_by_operation_and_first_table(
    statement: str, summary: tuple[str | None, str | None]
) -> None:
    assert statement_summary(statement) == summary
