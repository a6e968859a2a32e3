"""OpenTelemetry for the server: which signals the standard `OTEL_*` variables ask for
(`otel_config`, importing no OpenTelemetry), and the export they start (`otel_export`, imported
only when asked for). docs/observability.md."""
