"""Evaluations recorded on OpenTelemetry spans, as they arrive at an OTLP/HTTP receiver: the real
OpenTelemetry SDK (a TracerProvider of the test's own with the OTLP/HTTP span exporter) and
`support.otlp_receiver` decoding the export with opentelemetry-proto. Covers the SDK's own
`OpenTelemetryHook` and FlagstaffProvider under OpenFeature's OpenTelemetry hook
(`openfeature-hooks-opentelemetry`); both must carry the feature-flag semantic conventions'
attribute names, checked against the `opentelemetry-semantic-conventions` package.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flagstaff_sdk import Client, Config, Context, TestData
from flagstaff_sdk.hook import EvaluationSeriesContext, Hook, SeriesData
from flagstaff_sdk.openfeature import PROVIDER_NAME, FlagstaffProvider
from flagstaff_sdk.otel import EVENT_NAME, OpenTelemetryHook
from openfeature import api
from openfeature.contrib.hook.opentelemetry import TracingHook
from openfeature.evaluation_context import EvaluationContext
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.semconv._incubating.attributes import feature_flag_attributes as semconv
from opentelemetry.semconv.attributes.error_attributes import ERROR_TYPE
from support.deadlines import wait_until
from support.otlp_receiver import OtlpReceiver, ReceivedSpan, otlp_receiver

USER = Context.create("user-1")


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with otlp_receiver() as running:
        yield running


@pytest.fixture
def tracer_provider(receiver: OtlpReceiver) -> Iterator[TracerProvider]:
    provider = TracerProvider(resource=Resource.create({"service.name": "sdk-hook-test"}))
    exporter = OTLPSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces", timeout=10)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def td() -> TestData:
    data = TestData()
    data.update(
        data.flag("checkout")
        .variations("old", "new")
        .fallthrough_variation(0)
        .variation_for_user("user-1", 1)
    )
    data.update(data.flag("ratio").variations({"a": [1, 2]}, {"a": []}).fallthrough_variation(0))
    return data


def client_with(td: TestData, *hooks: Hook) -> Client:
    return Client(Config("sdk-otel", data_source=td, send_events=False, hooks=hooks))


def arrived(receiver: OtlpReceiver, name: str) -> ReceivedSpan:
    return wait_until(
        lambda: next((s for s in receiver.received.spans() if s.name == name), None),
        what=f"span {name!r} at the OTLP receiver",
        state=lambda: [s.name for s in receiver.received.spans()],
    )


def test_the_hook_records_each_evaluation_on_the_current_span_by_the_conventions(
    receiver: OtlpReceiver, tracer_provider: TracerProvider, td: TestData
) -> None:
    tracer = tracer_provider.get_tracer("test")
    with client_with(td, OpenTelemetryHook()) as client, tracer.start_as_current_span("request"):
        assert client.str_variation("checkout", USER, "none") == "new"
        assert client.str_variation("checkout", Context.create("org-9", "org"), "x") == "old"
        assert client.bool_variation("missing", USER, False) is False
    events = arrived(receiver, "request").events(EVENT_NAME)
    assert EVENT_NAME == "feature_flag.evaluation"
    targeted, fallthrough, missing = events
    assert targeted == {
        semconv.FEATURE_FLAG_KEY: "checkout",
        semconv.FEATURE_FLAG_PROVIDER_NAME: PROVIDER_NAME,
        semconv.FEATURE_FLAG_CONTEXT_ID: "user-1",
        semconv.FEATURE_FLAG_RESULT_VARIANT: "1",
        semconv.FEATURE_FLAG_RESULT_REASON: "targeting_match",
        semconv.FEATURE_FLAG_VERSION: str(client.flag("checkout").version),  # type: ignore[union-attr]
    }
    # a non-user context is named by its fully qualified key; no value without include_value
    assert fallthrough[semconv.FEATURE_FLAG_CONTEXT_ID] == "org:org-9"
    assert fallthrough[semconv.FEATURE_FLAG_RESULT_REASON] == "default"
    assert semconv.FEATURE_FLAG_RESULT_VALUE not in fallthrough
    # no variant: the value served (the default) is recorded, with the error's type
    assert missing[semconv.FEATURE_FLAG_RESULT_REASON] == "error"
    assert missing[ERROR_TYPE] == "flag_not_found"
    assert missing[semconv.FEATURE_FLAG_RESULT_VALUE] is False
    assert semconv.FEATURE_FLAG_RESULT_VARIANT not in missing


def test_the_hook_records_values_when_asked_and_spans_of_its_own(
    receiver: OtlpReceiver, tracer_provider: TracerProvider, td: TestData
) -> None:
    hook = OpenTelemetryHook(include_value=True, add_spans=True, tracer_provider=tracer_provider)
    tracer = tracer_provider.get_tracer("test")
    with client_with(td, hook) as client, tracer.start_as_current_span("job"):
        client.json_variation("ratio", USER, None)
        client.variation_detail("checkout", USER, "none")
    job = arrived(receiver, "job")
    ratio, checkout = job.events(EVENT_NAME)
    assert ratio[semconv.FEATURE_FLAG_RESULT_VALUE] == '{"a":[1,2]}'  # JSON text: no nesting
    assert checkout[semconv.FEATURE_FLAG_RESULT_VALUE] == "new"
    own = arrived(receiver, "flagstaff.variation_detail")
    assert own.span.parent_span_id == job.span.span_id
    assert own.attributes == {semconv.FEATURE_FLAG_KEY: "checkout"}
    assert arrived(receiver, "flagstaff.variation").span.parent_span_id == job.span.span_id


def test_a_failing_hook_changes_no_result_and_the_next_hook_still_runs(
    receiver: OtlpReceiver, tracer_provider: TracerProvider, td: TestData
) -> None:
    class Broken(Hook):
        name = "broken"

        def before_evaluation(
            self, series: EvaluationSeriesContext, data: SeriesData
        ) -> SeriesData:
            raise RuntimeError("hook bug")

    tracer = tracer_provider.get_tracer("test")
    with (
        client_with(td, Broken(), OpenTelemetryHook()) as client,
        tracer.start_as_current_span("with-bug"),
    ):
        assert client.variation("checkout", USER, "none") == "new"
    (event,) = arrived(receiver, "with-bug").events(EVENT_NAME)
    assert event[semconv.FEATURE_FLAG_KEY] == "checkout"


def test_the_provider_works_with_openfeatures_own_opentelemetry_hook(
    receiver: OtlpReceiver, tracer_provider: TracerProvider, td: TestData
) -> None:
    with client_with(td) as client:
        api.set_provider_and_wait(FlagstaffProvider(client))
        api.add_hooks([TracingHook()])
        try:
            of_client = api.get_client()
            with tracer_provider.get_tracer("test").start_as_current_span("openfeature"):
                context = EvaluationContext(targeting_key="user-1")
                assert of_client.get_string_value("checkout", "none", context) == "new"
                assert of_client.get_boolean_value("missing", True, context) is True
        finally:
            api.clear_hooks()
            api.shutdown()
    found, missing = arrived(receiver, "openfeature").events("feature_flag.evaluation")
    expected: dict[str, Any] = {
        semconv.FEATURE_FLAG_KEY: "checkout",
        semconv.FEATURE_FLAG_PROVIDER_NAME: PROVIDER_NAME,
        semconv.FEATURE_FLAG_CONTEXT_ID: "user-1",
        semconv.FEATURE_FLAG_RESULT_VARIANT: "1",
        semconv.FEATURE_FLAG_RESULT_REASON: "targeting_match",
    }
    assert {name: found.get(name) for name in expected} == expected
    assert missing[ERROR_TYPE] == "flag_not_found"
