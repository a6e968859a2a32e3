"""Starting the OTLP export for `flagstaff serve` and `flagstaff relay` when the OTEL_* variables
ask for one: the OpenTelemetry SDK is imported here, and only here, when they do."""

from __future__ import annotations

import importlib.metadata

from flagstaff_server.commands.error import CommandError
from flagstaff_server.telemetry.otel_config import OtelConfig
from flagstaff_server.telemetry.telemetry_port import Telemetry


def start_telemetry(otel: OtelConfig, *, role: str) -> Telemetry:
    """The OTLP export `otel` asks for; a one-line error when the `otel` extra is missing."""
    try:
        from flagstaff_server.telemetry.otel_export import OtelExport
    except ImportError as exc:
        raise CommandError(
            f"OTEL_* variables ask for an OTLP export, but {exc.name or 'OpenTelemetry'} is not "
            "installed: install flagstaff-server[otel]",
            exit_code=2,
        ) from exc
    return OtelExport(otel, version=_version(), role=role)


def _version() -> str:
    # read here rather than from flagstaff_server.app, which a relay never imports
    try:
        return importlib.metadata.version("flagstaff-server")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"
