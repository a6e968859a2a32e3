"""The public client: typed variations over one evaluate, defaults and error reasons, the event
sink seam, all_flags_state, secure mode, offline mode, status listeners and config validation."""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from delivery_support import flag
from flagstaff_core import Evaluation, EvaluationDetail, decode_data, secure_mode_hash
from flagstaff_sdk import (
    Client,
    Config,
    ConfigError,
    Context,
    DataSourceState,
    DataSourceStatus,
    Endpoint,
    ErrorKind,
    TestData,
    Timing,
    ValueType,
)
from flagstaff_sdk.cache import cache_path, write_cache
from flagstaff_sdk.merge import Holding
from flagstaff_sdk.region import RegionSet
from support.deadlines import wait_until

USER = Context.create("user-1")


class RecordingSink:
    def __init__(self, config: Config) -> None:
        self.evaluations: list[tuple[str, Any, bool, bool]] = []
        self.custom: list[tuple[str, Any, float | None]] = []
        self.identified: list[Context] = []
        self.flushed = 0
        self.closed = False

    def record_evaluation(
        self,
        key: str,
        context: Context,
        evaluation: Evaluation,
        detail: EvaluationDetail,
        default: Any,
        with_reason: bool,
    ) -> None:
        self.evaluations.append((key, detail.value, evaluation.flag is not None, with_reason))

    def record_custom(
        self, key: str, context: Context, data: Any, metric_value: float | None
    ) -> None:
        self.custom.append((key, data, metric_value))

    def record_identify(self, context: Context) -> None:
        self.identified.append(context)

    def flush(self) -> None:
        self.flushed += 1

    def close(self) -> None:
        self.closed = True


def client_with(td: TestData, **extra: Any) -> Client:
    return Client(Config(sdk_key="sdk-k", data_source=td, **extra))


@pytest.fixture
def td() -> TestData:
    data = TestData()
    data.update(data.flag("text").value_for_all("hello"))
    data.update(data.flag("number").value_for_all(3))
    data.update(data.flag("ratio").value_for_all(0.5))
    data.update(data.flag("on"))
    return data


def test_typed_variations_return_values_of_their_type_or_the_default(td: TestData) -> None:
    with client_with(td, send_events=False) as client:
        assert client.str_variation("text", USER, "d") == "hello"
        assert client.int_variation("number", USER, 0) == 3
        assert client.float_variation("number", USER, 0.0) == 3.0
        assert client.float_variation("ratio", USER, 0.0) == 0.5
        assert client.bool_variation("on", USER, False) is True
        assert client.bool_variation("text", USER, False) is False
        detail = client.evaluate("text", USER, 7, ValueType.INT)
        assert detail.value == 7
        assert detail.reason.error_kind is ErrorKind.WRONG_TYPE
        assert client.variation("missing", USER, "d") == "d"
        assert client.variation_detail("missing", USER, "d").reason.error_kind is (
            ErrorKind.FLAG_NOT_FOUND
        )


def test_contexts_as_json_are_accepted_and_invalid_ones_say_user_not_specified(
    td: TestData,
) -> None:
    with client_with(td, send_events=False) as client:
        assert client.variation("text", {"kind": "user", "key": "k"}, None) == "hello"
        detail = client.variation_detail("text", {"kind": "user", "key": ""}, "d")
        assert detail.value == "d"
        assert detail.reason.error_kind is ErrorKind.USER_NOT_SPECIFIED


def test_every_evaluation_custom_event_and_identify_reaches_the_event_sink(td: TestData) -> None:
    sinks: list[RecordingSink] = []

    def factory(config: Config) -> RecordingSink:
        sinks.append(RecordingSink(config))
        return sinks[-1]

    client = client_with(td, event_sink=factory)
    client.variation("text", USER, None)
    client.bool_variation("text", USER, False)
    client.variation_detail("missing", USER, "d")
    client.track("clicked", USER, {"x": 1}, 2.5)
    client.identify(USER)
    client.flush()
    client.close()
    sink = sinks[0]
    assert sink.evaluations == [
        ("text", "hello", True, False),
        ("text", False, True, False),
        ("missing", "d", False, True),
    ]
    assert sink.custom == [("clicked", {"x": 1}, 2.5)]
    assert sink.identified == [USER]
    assert sink.flushed == 1
    assert sink.closed


def test_all_flags_state_and_secure_mode_hash(td: TestData) -> None:
    with client_with(td, send_events=False) as client:
        state = client.all_flags_state(USER, with_reasons=True)
        assert state.valid
        assert state.get_flag_value("text") == "hello"
        assert state.get_flag_reason("text") == {"kind": "FALLTHROUGH"}
        assert client.secure_mode_hash(USER) == secure_mode_hash("sdk-k", USER)


def test_offline_without_data_returns_defaults_and_says_client_not_ready() -> None:
    with Client(Config(sdk_key="k", offline=True)) as client:
        assert not client.is_initialized()
        detail = client.variation_detail("any", USER, "d")
        assert detail.value == "d"
        assert detail.reason.error_kind is ErrorKind.CLIENT_NOT_READY
        assert client.all_flags_state(USER).to_json_dict() == {"$flagsState": {}, "$valid": False}
        assert client.data_source_status().state is DataSourceState.OFF


def test_status_listeners_hear_the_client_stop(td: TestData) -> None:
    client = client_with(td, send_events=False)
    heard: list[DataSourceStatus] = []
    client.add_status_listener(heard.append)
    assert client.data_source_status().state is DataSourceState.VALID
    client.close()
    assert client.data_source_status().state is DataSourceState.OFF
    # the notifier delivered what was queued before it stopped
    wait_until(lambda: [s.state for s in heard] == [DataSourceState.OFF])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_uri": "ftp://x"},
        {"base_uri": "http://a", "endpoints": (Endpoint.at("http://b"),)},
        {"protocol": "fdv3"},
        {"init_timeout": -1},
        {"auto_reload": True},
        {"timing": "fast"},
    ],
    ids=["scheme", "both", "protocol", "timeout", "reload-without-files", "timing"],
)
def test_bad_configuration_is_a_config_error(kwargs: dict[str, Any]) -> None:
    if kwargs.get("timing") == "fast":
        with pytest.raises(ConfigError):
            Timing(poll_interval=0)
        return
    with pytest.raises(ConfigError):
        Config(sdk_key="k", **kwargs)


def test_endpoints_strip_trailing_slashes_and_base_uri_is_one_region() -> None:
    config = Config(sdk_key="k", base_uri="http://node:8030/")
    assert config.endpoints == (Endpoint.at("http://node:8030"),)
    assert config.endpoints[0].stream_uri == "http://node:8030"


def test_regions_prefer_the_first_healthy_and_rotate_when_all_fail() -> None:
    regions = RegionSet((Endpoint.at("http://a"), Endpoint.at("http://b")), fdv1=False, threshold=2)
    a, b = regions.regions
    assert regions.pick() is a
    regions.failed(a)
    assert regions.pick() is a
    regions.failed(a)
    assert regions.pick() is b
    assert regions.better_than(b) == [a]
    assert regions.in_poll_order() == [b, a]
    regions.failed(b)
    regions.failed(b)
    assert regions.all_tried_and_failing
    assert {regions.pick().name, regions.pick().name} == {"http://a", "http://b"}
    regions.succeeded(a)
    assert regions.pick() is a


def test_the_sdk_imports_only_the_core_httpx_and_the_standard_library_outside_its_extras() -> None:
    source = Path(__file__).parents[3] / "packages" / "sdk" / "src" / "flagstaff_sdk"
    allowed = {"flagstaff_core", "flagstaff_sdk", "httpx", *sys.stdlib_module_names}
    for path in source.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                # the optional OpenFeature provider may import its own SDK, and the optional
                # OpenTelemetry hook (the `otel` extra) the OpenTelemetry API
                if path.parent.name == "openfeature" and top == "openfeature":
                    continue
                if path.name == "otel.py" and top == "opentelemetry":
                    continue
                assert top in allowed, f"{path.name} imports {name}"


def test_offline_with_a_disk_cache_evaluates_the_cached_flags(tmp_path: Path) -> None:
    data = decode_data({"flags": {"f": flag("f", 3, variations=("off", "cached"))}})
    write_cache(cache_path(tmp_path, "k"), Holding(data=data), saved_at=time.time() - 60)
    with Client(Config(sdk_key="k", offline=True, cache_dir=tmp_path)) as client:
        assert client.variation("f", USER, None) == "cached"
        status = client.data_source_status()
        assert (status.state, status.source) == (DataSourceState.OFF, "cache")
        assert status.data_age is not None
        assert status.data_age >= 59


def test_offline_still_uses_an_explicit_data_source(td: TestData) -> None:
    with client_with(td, offline=True) as client:
        assert client.variation("text", USER, None) == "hello"
