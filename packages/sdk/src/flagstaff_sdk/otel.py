"""The OpenTelemetry evaluation hook: each evaluation recorded on the caller's current span as a
`feature_flag.evaluation` event with OpenTelemetry's feature-flag semantic-convention attributes,
and optionally a span of its own per evaluation. Needs `opentelemetry-api` (the `otel` extra);
records nothing while no span is recording, so an application without a tracer pays one call.
"""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from flagstaff_sdk.hook import EvaluationOutcome, EvaluationSeriesContext, Hook, SeriesData
from flagstaff_sdk.result_reason import error_type, result_reason

EVENT_NAME = "feature_flag.evaluation"
PROVIDER_NAME = "flagstaff"
"""The name the OpenFeature provider gives itself too (`flagstaff_sdk.openfeature`)."""

KEY = "feature_flag.key"
PROVIDER = "feature_flag.provider.name"
CONTEXT_ID = "feature_flag.context.id"
VARIANT = "feature_flag.result.variant"
VALUE = "feature_flag.result.value"
REASON = "feature_flag.result.reason"
VERSION = "feature_flag.version"
ERROR_TYPE = "error.type"

_SPAN = "span"


class OpenTelemetryHook(Hook):
    """`Config(hooks=[OpenTelemetryHook()])`.

    `include_value`: also record `feature_flag.result.value` when there is a variant (the
    conventions make the value opt-in then: it may be sensitive; without a variant, as for a
    default served on an error, the value is always recorded). `add_spans`: wrap each evaluation
    in a span `flagstaff.<method>` of its own, a child of the current span. `tracer_provider`:
    where those spans come from (the global provider by default).
    """

    name = "flagstaff-opentelemetry"

    def __init__(
        self,
        *,
        include_value: bool = False,
        add_spans: bool = False,
        tracer_provider: trace.TracerProvider | None = None,
    ) -> None:
        self._include_value = include_value
        self._tracer = trace.get_tracer("flagstaff_sdk", tracer_provider=tracer_provider)
        self._add_spans = add_spans

    def before_evaluation(self, series: EvaluationSeriesContext, data: SeriesData) -> SeriesData:
        if not self._add_spans or not trace.get_current_span().is_recording():
            return data
        span = self._tracer.start_span(f"flagstaff.{series.method}", attributes={KEY: series.key})
        return {**data, _SPAN: span}

    def after_evaluation(
        self, series: EvaluationSeriesContext, data: SeriesData, outcome: EvaluationOutcome
    ) -> SeriesData:
        span = trace.get_current_span()
        if span.is_recording():
            span.add_event(EVENT_NAME, evaluation_attributes(series, outcome, self._include_value))
        own = data.get(_SPAN)
        if isinstance(own, trace.Span):
            own.end()
        return data


def evaluation_attributes(
    series: EvaluationSeriesContext, outcome: EvaluationOutcome, include_value: bool
) -> dict[str, AttributeValue]:
    """The event's attributes, by the conventions' names (registry: `feature_flag.*`)."""
    detail = outcome.detail
    attributes: dict[str, AttributeValue] = {
        KEY: series.key,
        PROVIDER: PROVIDER_NAME,
        REASON: result_reason(detail, outcome.flag),
    }
    if series.context is not None:
        attributes[CONTEXT_ID] = series.context.fully_qualified_key
    if detail.variation_index is not None:
        attributes[VARIANT] = str(detail.variation_index)
    if include_value or detail.variation_index is None:
        attributes[VALUE] = _attribute_value(detail.value)
    if outcome.flag is not None:
        attributes[VERSION] = str(outcome.flag.version)
    error = error_type(detail)
    if error is not None:
        attributes[ERROR_TYPE] = error
    return attributes


def _attribute_value(value: Any) -> AttributeValue:
    """Scalars as themselves; JSON objects, arrays and null as their JSON text (an attribute
    holds no nested values)."""
    if isinstance(value, bool | int | float | str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
