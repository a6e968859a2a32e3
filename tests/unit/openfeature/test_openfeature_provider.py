"""FlagstaffProvider against the provider requirements of the OpenFeature specification, through
the real `openfeature` API (`api.set_provider_and_wait`, `api.get_client()`), driven by TestData.

Spec sections: 2.1 metadata, 2.2 flag value resolution (typed methods, value, variant, reason,
error code and message, flag metadata), 2.3 provider hooks, 2.4 initialization, 2.5 shutdown,
2.7 tracking, 3.x context (mapped to Flagstaff contexts), 5.x provider events and status.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flagstaff_core import Context, ErrorKind, EvaluationDetail, ReasonKind
from flagstaff_core import Reason as CoreReason
from flagstaff_sdk import AsyncClient, Client, Config, DataSourceState, TestData
from flagstaff_sdk.openfeature import FlagstaffProvider
from flagstaff_sdk.openfeature.resolution import resolution_of
from openfeature import api
from openfeature.evaluation_context import EvaluationContext
from openfeature.event import EventDetails, ProviderEvent, ProviderEventDetails
from openfeature.exception import ErrorCode, ProviderNotReadyError
from openfeature.flag_evaluation import Reason
from openfeature.provider import ProviderStatus
from openfeature.track import TrackingEventDetails
from support.deadlines import wait_until

USER = EvaluationContext(targeting_key="user-1", attributes={"plan": "gold"})


class RecordingSink:
    """An EventSink that keeps what the client reports (custom events and evaluations)."""

    def __init__(self) -> None:
        self.customs: list[tuple[str, Context, Any, float | None]] = []
        self.evaluations: list[tuple[str, Context, bool]] = []

    def record_evaluation(
        self,
        key: str,
        context: Context,
        evaluation: Any,
        detail: EvaluationDetail,
        default: Any,
        with_reason: bool,
    ) -> None:
        self.evaluations.append((key, context, with_reason))

    def record_custom(
        self, key: str, context: Context, data: Any, metric_value: float | None
    ) -> None:
        self.customs.append((key, context, data, metric_value))

    def record_identify(self, context: Context) -> None:
        return None

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None


@pytest.fixture
def td() -> TestData:
    data = TestData()
    data.update(data.flag("bool").variation_for_all(True))
    data.update(data.flag("str").variations("red", "green").fallthrough_variation(1))
    data.update(data.flag("int").variations(3, 4.0, 3.5).fallthrough_variation(0))
    data.update(data.flag("float").variations(2, 2.5).fallthrough_variation(0))
    data.update(data.flag("obj").variations({"a": [1, 2]}, [1, "x"]).fallthrough_variation(0))
    data.update(
        data.flag("targeted")
        .variations("t", "f")
        .fallthrough_variation(1)
        .variation_for_user("user-1", 0)
    )
    data.update(
        data.flag("ruled")
        .variations("r", "f")
        .fallthrough_variation(1)
        .if_match("plan", "gold")
        .then_return(0)
    )
    data.update(data.flag("off").variations("on", "off").off_variation(1).on(False))
    return data


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
def client(td: TestData, sink: RecordingSink) -> Iterator[Client]:
    flagstaff = Client(Config(sdk_key="sdk-of", data_source=td, event_sink=lambda _: sink))
    yield flagstaff
    flagstaff.close()


@pytest.fixture
def provider(client: Client) -> Iterator[FlagstaffProvider]:
    provider = FlagstaffProvider(client)
    api.set_provider_and_wait(provider)
    yield provider
    api.clear_providers()


# 2.1 metadata, 2.3 hooks -------------------------------------------------------------------------


def test_provider_metadata_has_a_name(provider: FlagstaffProvider) -> None:
    assert api.get_provider_metadata().name == "flagstaff"
    assert api.get_client().provider is provider


def test_provider_has_no_hooks(provider: FlagstaffProvider) -> None:
    assert provider.get_provider_hooks() == []


# 2.2 resolution ----------------------------------------------------------------------------------


def test_typed_resolution_returns_value_variant_and_reason(provider: FlagstaffProvider) -> None:
    of = api.get_client()
    assert of.get_boolean_value("bool", False, USER) is True
    assert of.get_string_value("str", "x", USER) == "green"
    detail = of.get_integer_details("int", 0, USER)
    assert (detail.value, detail.variant, detail.reason) == (3, "0", Reason.DEFAULT)
    assert detail.error_code is None
    assert of.get_float_details("float", 0.0, USER).value == 2.0
    assert isinstance(of.get_float_value("float", 0.0, USER), float)
    assert of.get_object_value("obj", {}, USER) == {"a": [1, 2]}


def test_an_integral_float_is_an_integer_but_a_fraction_is_a_type_mismatch(
    provider: FlagstaffProvider, td: TestData
) -> None:
    of = api.get_client()
    td.update(td.flag("int").fallthrough_variation(1))
    whole = of.get_integer_details("int", 0, USER)
    assert (whole.value, type(whole.value)) == (4, int)
    td.update(td.flag("int").fallthrough_variation(2))
    fraction = of.get_integer_details("int", 7, USER)
    assert fraction.value == 7
    assert fraction.error_code == ErrorCode.TYPE_MISMATCH
    assert fraction.reason == Reason.ERROR


def test_object_resolution_accepts_arrays(provider: FlagstaffProvider, td: TestData) -> None:
    td.update(td.flag("obj").fallthrough_variation(1))
    assert api.get_client().get_object_value("obj", {}, USER) == [1, "x"]


@pytest.mark.parametrize(
    ("key", "reason", "variant"),
    [
        ("targeted", Reason.TARGETING_MATCH, "0"),
        ("ruled", Reason.TARGETING_MATCH, "0"),
        ("str", Reason.DEFAULT, "1"),
        ("off", Reason.DISABLED, "1"),
    ],
)
def test_reasons_are_mapped(
    provider: FlagstaffProvider, key: str, reason: Reason, variant: str
) -> None:
    detail = api.get_client().get_string_details(key, "default", USER)
    assert detail.reason == reason
    assert detail.variant == variant
    assert detail.error_code is None


def _rollout_flag(key: str, **extra: Any) -> dict[str, Any]:
    rollout = {"variations": [{"variation": 0, "weight": 100000}, {"variation": 1, "weight": 0}]}
    flag = {
        "key": key,
        "version": 1,
        "on": True,
        "variations": ["a", "b"],
        "offVariation": 1,
        "fallthrough": {"rollout": rollout},
        "salt": key,
    }
    flag.update(extra)
    return flag


def test_rollouts_and_experiments_are_split(provider: FlagstaffProvider, td: TestData) -> None:
    td.use_preconfigured_flag(_rollout_flag("rollout"))
    experiment = _rollout_flag("experiment")
    experiment["fallthrough"]["rollout"]["kind"] = "experiment"
    td.use_preconfigured_flag(experiment)
    rule_rollout = _rollout_flag(
        "rule-rollout",
        fallthrough={"variation": 1},
        rules=[
            {
                "id": "r",
                "rollout": experiment["fallthrough"]["rollout"] | {"kind": "rollout"},
                "clauses": [{"attribute": "plan", "op": "in", "values": ["gold"]}],
            }
        ],
    )
    td.use_preconfigured_flag(rule_rollout)
    of = api.get_client()
    for key in ("rollout", "experiment", "rule-rollout"):
        detail = of.get_string_details(key, "d", USER)
        assert (key, detail.reason, detail.value) == (key, Reason.SPLIT, "a")
    assert of.get_string_details("experiment", "d", USER).flag_metadata["inExperiment"] is True


def test_a_failed_prerequisite_is_disabled_and_names_the_prerequisite(
    provider: FlagstaffProvider, td: TestData
) -> None:
    td.use_preconfigured_flag(
        _rollout_flag("dependent", prerequisites=[{"key": "off", "variation": 0}])
    )
    detail = api.get_client().get_string_details("dependent", "d", USER)
    assert detail.reason == Reason.DISABLED
    assert detail.value == "b"
    assert detail.flag_metadata["prerequisiteKey"] == "off"
    assert detail.flag_metadata["reasonKind"] == "PREREQUISITE_FAILED"


def test_flag_metadata_carries_the_launchdarkly_reason(provider: FlagstaffProvider) -> None:
    detail = api.get_client().get_string_details("ruled", "d", USER)
    assert detail.flag_metadata == {
        "reasonKind": "RULE_MATCH",
        "ruleIndex": 0,
        "ruleId": "rule0",
        "variationIndex": 0,
        "flagVersion": 1,
    }


# 2.2.7 errors ------------------------------------------------------------------------------------


def test_unknown_flag_is_flag_not_found_with_the_default(provider: FlagstaffProvider) -> None:
    detail = api.get_client().get_boolean_details("nope", True, USER)
    assert detail.value is True
    assert detail.error_code == ErrorCode.FLAG_NOT_FOUND
    assert detail.reason == Reason.ERROR
    assert detail.error_message


@pytest.mark.parametrize(
    ("resolve", "key"),
    [
        (lambda of: of.get_boolean_details("str", False, USER), "str"),
        (lambda of: of.get_string_details("bool", "x", USER), "bool"),
        (lambda of: of.get_integer_details("str", 1, USER), "str"),
        (lambda of: of.get_float_details("bool", 1.0, USER), "bool"),
        (lambda of: of.get_object_details("str", {"d": 1}, USER), "str"),
    ],
)
def test_wrong_types_are_type_mismatch_with_the_default(
    provider: FlagstaffProvider, resolve: Callable[[Any], Any], key: str
) -> None:
    detail = resolve(api.get_client())
    assert detail.error_code == ErrorCode.TYPE_MISMATCH
    assert detail.reason == Reason.ERROR
    assert detail.value in (False, "x", 1, 1.0, {"d": 1})


@pytest.mark.parametrize(
    ("context", "code"),
    [
        (EvaluationContext(), ErrorCode.TARGETING_KEY_MISSING),
        (EvaluationContext(attributes={"kind": "org"}), ErrorCode.TARGETING_KEY_MISSING),
        (EvaluationContext("k", {"kind": "multi"}), ErrorCode.INVALID_CONTEXT),
        (EvaluationContext("k", {"kind": "bad kind!"}), ErrorCode.INVALID_CONTEXT),
        (EvaluationContext("k", {"kind": "kind"}), ErrorCode.INVALID_CONTEXT),
        (EvaluationContext("k", {"anonymous": "yes"}), ErrorCode.INVALID_CONTEXT),
        (EvaluationContext("k", {"name": 5}), ErrorCode.INVALID_CONTEXT),
        (EvaluationContext("k", {"privateAttributes": "email"}), ErrorCode.INVALID_CONTEXT),
        (EvaluationContext(None, {"kind": "multi", "org": "o1"}), ErrorCode.INVALID_CONTEXT),
        (
            EvaluationContext(None, {"kind": "multi", "org": {"name": "no key"}}),
            ErrorCode.TARGETING_KEY_MISSING,
        ),
    ],
)
def test_contexts_that_cannot_be_mapped_are_errors(
    provider: FlagstaffProvider, context: EvaluationContext, code: ErrorCode
) -> None:
    detail = api.get_client().get_boolean_details("bool", False, context)
    assert detail.error_code == code
    assert detail.value is False
    assert detail.reason == Reason.ERROR


def test_error_kinds_map_to_openfeature_codes() -> None:
    expected = {
        ErrorKind.CLIENT_NOT_READY: ErrorCode.PROVIDER_NOT_READY,
        ErrorKind.FLAG_NOT_FOUND: ErrorCode.FLAG_NOT_FOUND,
        ErrorKind.MALFORMED_FLAG: ErrorCode.PARSE_ERROR,
        ErrorKind.USER_NOT_SPECIFIED: ErrorCode.INVALID_CONTEXT,
        ErrorKind.WRONG_TYPE: ErrorCode.TYPE_MISMATCH,
        ErrorKind.EXCEPTION: ErrorCode.GENERAL,
    }
    assert set(expected) == set(ErrorKind)
    for kind, code in expected.items():
        detail = EvaluationDetail("d", None, CoreReason(kind=ReasonKind.ERROR, error_kind=kind))
        resolved = resolution_of(detail, None, "d")
        assert (kind, resolved.error_code, resolved.reason) == (kind, code, Reason.ERROR)
        assert resolved.flag_metadata["errorKind"] == kind.value


def test_a_malformed_flag_is_a_parse_error(provider: FlagstaffProvider, td: TestData) -> None:
    td.use_preconfigured_flag(_rollout_flag("broken", fallthrough={"variation": 9}))
    detail = api.get_client().get_string_details("broken", "d", USER)
    assert detail.error_code == ErrorCode.PARSE_ERROR
    assert detail.value == "d"


# 3.x context mapping -----------------------------------------------------------------------------


def test_context_mapping_reaches_the_evaluation(
    provider: FlagstaffProvider, td: TestData, sink: RecordingSink
) -> None:
    td.update(
        td.flag("org-rule")
        .variations("yes", "no")
        .fallthrough_variation(1)
        .if_match_context("org", "tier", 3)
        .then_return(0)
    )
    of = api.get_client()
    org = EvaluationContext("o1", {"kind": "org", "tier": 3, "name": "Acme"})
    assert of.get_string_value("org-rule", "d", org) == "yes"
    multi = EvaluationContext(
        None,
        {
            "kind": "multi",
            "user": {"targetingKey": "u9", "privateAttributes": ["email"], "email": "e"},
            "org": {"key": "o2", "tier": 3},
        },
    )
    assert of.get_string_value("org-rule", "d", multi) == "yes"
    contexts = [context for key, context, _ in sink.evaluations if key == "org-rule"]
    single, combined = contexts
    assert (single.kind, single.key, single.name) == ("org", "o1", "Acme")
    assert combined.kind == "multi"
    assert combined.fully_qualified_key == "org:o2:user:u9"
    user = combined.individual("user")
    assert user is not None
    assert user.private_attributes == ("email",)
    # the OpenFeature evaluation goes through the client like variation_detail
    assert all(with_reason for _, _, with_reason in sink.evaluations)


def test_global_and_client_contexts_are_merged_by_openfeature(provider: FlagstaffProvider) -> None:
    api.set_evaluation_context(EvaluationContext("user-1"))
    try:
        assert api.get_client().get_string_value("targeted", "d") == "t"
    finally:
        api.set_evaluation_context(EvaluationContext())


# 2.7 tracking ------------------------------------------------------------------------------------


def test_track_records_a_custom_event(provider: FlagstaffProvider, sink: RecordingSink) -> None:
    api.get_client().track("purchase", USER, TrackingEventDetails(9.5, {"sku": "x"}))
    api.get_client().track("view", USER)
    api.get_client().track("nobody", EvaluationContext())
    (purchase_key, purchase_context, data, metric), view = sink.customs
    assert (purchase_key, purchase_context.key, data, metric) == (
        "purchase",
        "user-1",
        {"sku": "x"},
        9.5,
    )
    assert view[0] == "view"
    assert view[2:] == (None, None)


# 2.4 initialization, 2.5 shutdown, 5.x events ----------------------------------------------------


class Events:
    """Global OpenFeature event handlers; OpenFeature runs them on its own executor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.seen: list[tuple[ProviderEvent, EventDetails]] = []
        for event in ProviderEvent:
            api.add_handler(event, lambda details, event=event: self._add(event, details))
        # the no-op default provider is READY, and a READY handler runs at once (spec 5.3.3)
        wait_until(lambda: self.kinds() == [ProviderEvent.PROVIDER_READY], what="immediate READY")
        with self._lock:
            self.seen.clear()

    def _add(self, event: ProviderEvent, details: EventDetails) -> None:
        with self._lock:
            self.seen.append((event, details))

    def kinds(self) -> list[ProviderEvent]:
        with self._lock:
            return [event for event, _ in self.seen]


def test_initialization_announces_ready_and_flag_changes_announce_the_flag(
    client: Client, td: TestData
) -> None:
    events = Events()
    api.set_provider_and_wait(FlagstaffProvider(client))
    try:
        assert api.get_client().get_provider_status() == ProviderStatus.READY
        wait_until(lambda: events.kinds() == [ProviderEvent.PROVIDER_READY], what="READY")
        td.update(td.flag("str").fallthrough_variation(0))
        wait_until(lambda: len(events.kinds()) == 2, what="configuration changed")
        event, details = events.seen[1]
        assert event == ProviderEvent.PROVIDER_CONFIGURATION_CHANGED
        assert details.flags_changed == ["str"]
        assert details.provider_name == "flagstaff"
    finally:
        api.clear_providers()


def test_a_client_without_data_fails_initialization_and_answers_not_ready() -> None:
    flagstaff = Client(Config(sdk_key="sdk-none", offline=True, init_timeout=0))
    events = Events()
    provider = FlagstaffProvider(flagstaff, init_timeout=0.0)
    with pytest.raises(ProviderNotReadyError):
        api.set_provider_and_wait(provider)
    try:
        of = api.get_client()
        assert of.get_provider_status() == ProviderStatus.ERROR
        wait_until(lambda: events.kinds() == [ProviderEvent.PROVIDER_ERROR], what="ERROR")
        assert events.seen[0][1].error_code == ErrorCode.PROVIDER_NOT_READY
        detail = of.get_boolean_details("bool", True, USER)
        assert detail.error_code == ErrorCode.PROVIDER_NOT_READY
        assert detail.value is True
    finally:
        api.clear_providers()


def _emitted(provider: FlagstaffProvider) -> list[tuple[ProviderEvent, ProviderEventDetails]]:
    emitted: list[tuple[ProviderEvent, ProviderEventDetails]] = []
    provider.attach(lambda _, event, details: emitted.append((event, details)))
    return emitted


def _notifier_caught_up(client: Client, td: TestData, key: str) -> None:
    """Change `key` and wait until a listener added now has heard of it: the notifier calls
    listeners in order on one thread, so every earlier listener has been called by then."""
    heard = threading.Event()
    client.add_flag_change_listener(lambda change: heard.set() if change.key == key else None)
    td.update(td.flag(key).on(False))
    assert heard.wait(10)


def test_shutdown_removes_the_listeners_and_can_leave_the_client_open(
    client: Client, td: TestData
) -> None:
    provider = FlagstaffProvider(client, close_client=False)
    emitted = _emitted(provider)
    provider.initialize(EvaluationContext())
    _notifier_caught_up(client, td, "str")
    assert [(e, d.flags_changed) for e, d in emitted] == [
        (ProviderEvent.PROVIDER_CONFIGURATION_CHANGED, ["str"])
    ]
    provider.shutdown()
    _notifier_caught_up(client, td, "bool")
    assert len(emitted) == 1
    assert client.data_source_status().state is DataSourceState.VALID


def test_shutdown_through_openfeature_closes_the_client(client: Client) -> None:
    api.set_provider_and_wait(FlagstaffProvider(client))
    api.clear_providers()
    assert client.data_source_status().state is DataSourceState.OFF


async def test_an_async_client_started_first_serves_openfeature(td: TestData) -> None:
    flagstaff = AsyncClient(Config(sdk_key="sdk-async", data_source=td, send_events=False))
    assert await flagstaff.start()
    api.set_provider_and_wait(FlagstaffProvider(flagstaff))
    try:
        detail = await api.get_client().get_string_details_async("str", "d", USER)
        assert (detail.value, detail.reason) == ("green", Reason.DEFAULT)
    finally:
        api.clear_providers()
        await flagstaff.aclose()
