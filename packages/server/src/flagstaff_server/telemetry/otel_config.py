"""Which OpenTelemetry signals the server exports, read from the standard `OTEL_*` variables.
Pure and cheap: it imports nothing of OpenTelemetry, so a server that exports nothing never loads
the OpenTelemetry SDK.

Off by default, unlike the specification's `otlp` default for `OTEL_{TRACES,METRICS}_EXPORTER`:
a signal is exported when its exporter variable says `otlp`, or when it is unset and an OTLP
endpoint is given. `OTEL_SDK_DISABLED=true` turns everything off. Only OTLP over HTTP with
protobuf is installed (the `otel` extra), so any other protocol is a configuration error rather
than a silent fallback.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flagstaff_server.settings import SettingsError

SIGNALS = ("traces", "metrics")
PROTOCOL = "http/protobuf"


@dataclass(frozen=True, slots=True, kw_only=True)
class OtelConfig:
    traces: bool = False
    metrics: bool = False

    @property
    def enabled(self) -> bool:
        return self.traces or self.metrics


def otel_config(environ: Mapping[str, str]) -> OtelConfig:
    """What `environ` asks for; `SettingsError` naming the variable for a value not supported."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return OtelConfig()
    wanted = {signal: _exports(environ, signal) for signal in SIGNALS}
    for signal, on in wanted.items():
        if on:
            _check_protocol(environ, signal)
    return OtelConfig(traces=wanted["traces"], metrics=wanted["metrics"])


def _exports(environ: Mapping[str, str], signal: str) -> bool:
    name = f"OTEL_{signal.upper()}_EXPORTER"
    raw = environ.get(name, "").strip()
    if not raw:
        return bool(
            environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
            or environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
        )
    exporters = {part.strip().lower() for part in raw.split(",") if part.strip()}
    unsupported = exporters - {"otlp", "none"}
    if unsupported:
        raise SettingsError(
            f"{name}: Flagstaff exports 'otlp' or 'none', got {', '.join(sorted(unsupported))!r}"
        )
    return "otlp" in exporters


def _check_protocol(environ: Mapping[str, str], signal: str) -> None:
    for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        value = environ.get(name, "").strip()
        if value:
            if value != PROTOCOL:
                raise SettingsError(
                    f"{name}: Flagstaff exports OTLP as {PROTOCOL!r} only, got {value!r}"
                )
            return
