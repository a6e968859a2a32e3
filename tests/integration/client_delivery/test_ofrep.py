"""OFREP v1 against the whole server: the official OpenFeature Python SDK with its OFREP provider
resolves every value type with the mapped reasons and error codes; bulk evaluation answers 304 to
its ETag and points at an SSE stream that announces changes with the next ETag."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from client_server import (
    ENV_PATH,
    Deployment,
    next_event,
    running_server,
    sse_events,
    wait_delivered,
)
from openfeature import api
from openfeature.client import OpenFeatureClient
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext
from openfeature.flag_evaluation import ErrorCode, Reason
from support.deadlines import wait_until

DOMAIN = "client-delivery-ofrep-tests"
USER = EvaluationContext(targeting_key="user-1", attributes={"plan": "pro"})


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with running_server(Path(tmp_path_factory.mktemp("ofrep"))) as deployment:
        deployment.patch_flag(
            "string-flag",
            [
                {
                    "op": "replace",
                    "path": f"{ENV_PATH}/targets",
                    "value": [{"values": ["vip"], "variation": 0}],
                }
            ],
        )
        rollout = {
            "variations": [{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}]
        }
        deployment.patch_flag(
            "number-flag",
            [{"op": "replace", "path": f"{ENV_PATH}/fallthrough", "value": {"rollout": rollout}}],
        )
        wait_delivered(deployment.api)
        yield deployment


def client_for(deployment: Deployment, key: str) -> OpenFeatureClient:
    provider = OFREPProvider(
        deployment.url, headers_factory=lambda: {"Authorization": f"Bearer {key}"}
    )
    api.set_provider(provider, domain=DOMAIN)
    return api.get_client(DOMAIN)


@pytest.fixture
def client(deployment: Deployment) -> Iterator[OpenFeatureClient]:
    yield client_for(deployment, deployment.sdk_key)
    api.clear_providers()


def test_every_value_type_resolves_with_variant_and_metadata(client: OpenFeatureClient) -> None:
    flag = client.get_boolean_details("bool-flag", False, USER)
    assert (flag.value, flag.reason, flag.variant, flag.error_code) == (
        True,
        Reason.STATIC,
        "1",
        None,
    )
    assert flag.flag_metadata["ldReason"] == "FALLTHROUGH"
    assert client.get_string_details("string-flag", "x", USER).value == "blue"
    assert client.get_float_details("float-flag", 0.0, USER).value == 2.5
    assert client.get_object_details("object-flag", {}, USER).value == {
        "size": "xl",
        "items": [1, 2],
    }
    number = client.get_integer_details("number-flag", 0, USER)
    assert (number.value in (1, 42), number.reason) == (True, Reason.SPLIT)


def test_reasons_follow_the_documented_mapping(
    deployment: Deployment, client: OpenFeatureClient
) -> None:
    vip = EvaluationContext(targeting_key="vip")
    target = client.get_string_details("string-flag", "x", vip)
    assert (target.value, target.reason) == ("red", Reason.TARGETING_MATCH)
    assert target.flag_metadata["ldReason"] == "TARGET_MATCH"
    deployment.patch_flag(
        "float-flag", [{"op": "replace", "path": f"{ENV_PATH}/on", "value": False}]
    )
    # the API answers once the change is stored; delivery applies it from the feed a moment later
    wait_until(
        lambda: client.get_float_details("float-flag", 9.0, USER).reason == Reason.DISABLED,
        what="delivery to have the flag turned off",
    )
    off = client.get_float_details("float-flag", 9.0, USER)
    assert (off.reason, off.flag_metadata["ldReason"]) == (Reason.DISABLED, "OFF")
    assert off.value in (0.5, 2.5)  # the flag's off variation


def test_errors_have_openfeature_codes(client: OpenFeatureClient) -> None:
    missing = client.get_boolean_details("no-such-flag", True, USER)
    assert (missing.value, missing.error_code, missing.reason) == (
        True,
        ErrorCode.FLAG_NOT_FOUND,
        Reason.ERROR,
    )
    mismatch = client.get_string_details("bool-flag", "dflt", USER)
    assert (mismatch.value, mismatch.error_code) == ("dflt", ErrorCode.TYPE_MISMATCH)
    anonymous = EvaluationContext(attributes={"plan": "pro"})
    no_key = client.get_boolean_details("bool-flag", False, anonymous)
    assert (no_key.value, no_key.error_code) == (False, ErrorCode.TARGETING_KEY_MISSING)
    bad = EvaluationContext(targeting_key="u", attributes={"kind": "multi"})
    assert client.get_boolean_details("bool-flag", False, bad).error_code == (
        ErrorCode.INVALID_CONTEXT
    )


def test_each_key_kind_sees_its_flags(deployment: Deployment) -> None:
    try:
        mobile = client_for(deployment, deployment.mobile_key)
        assert mobile.get_boolean_value("mobile-flag", False, USER) is True
        hidden = mobile.get_boolean_details("server-flag", False, USER)
        assert hidden.error_code == ErrorCode.FLAG_NOT_FOUND
        browser = client_for(deployment, deployment.client_side_id)
        assert browser.get_boolean_value("bool-flag", False, USER) is True
        assert browser.get_boolean_details("mobile-flag", False, USER).error_code == (
            ErrorCode.FLAG_NOT_FOUND
        )
    finally:
        api.clear_providers()


def bulk(deployment: Deployment, key: str, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{deployment.url}/ofrep/v1/evaluate/flags",
        json={"context": {"targetingKey": "user-1"}},
        headers={"Authorization": f"Bearer {key}", **headers},
    )


def test_bulk_etag_and_change_notifications(deployment: Deployment) -> None:
    first = bulk(deployment, deployment.client_side_id)
    assert first.status_code == 200, first.text
    body: dict[str, Any] = first.json()
    keys = {entry["key"] for entry in body["flags"]}
    assert keys == {"bool-flag", "string-flag", "number-flag", "float-flag", "object-flag"}
    etag = first.headers["ETag"]
    assert bulk(deployment, deployment.client_side_id, **{"If-None-Match": etag}).status_code == 304
    [stream] = body["eventStreams"]
    assert stream["type"] == "sse"
    with httpx.stream("GET", stream["url"], timeout=5) as sse:
        events = sse_events(sse.iter_lines())
        assert next_event(events, "message")[1] == {"type": "refetchEvaluation", "etag": etag}
        deployment.set_fallthrough("bool-flag", 0)
        _, notice = next_event(events, "message")
    assert notice["type"] == "refetchEvaluation"
    assert notice["etag"] != etag
    refetched = bulk(deployment, deployment.client_side_id, **{"If-None-Match": etag})
    assert refetched.status_code == 200
    assert refetched.headers["ETag"] == notice["etag"]
    values = {entry["key"]: entry.get("value") for entry in refetched.json()["flags"]}
    assert values["bool-flag"] is False


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        (b"{", {}, 400, "PARSE_ERROR"),
        (b'{"context": []}', {}, 400, "INVALID_CONTEXT"),
        (b'{"context": {"targetingKey": 7}}', {}, 400, "INVALID_CONTEXT"),
        (b'{"context": {}}', {}, 400, "TARGETING_KEY_MISSING"),
        (b'{"context": {"targetingKey": "u"}}', {"Authorization": "Bearer nope"}, 401, None),
        (b'{"context": {"targetingKey": "u"}}', {"Authorization": ""}, 401, None),
    ],
)
def test_bad_bulk_requests(
    deployment: Deployment, body: bytes, headers: dict[str, str], status: int, code: str | None
) -> None:
    response = httpx.post(
        f"{deployment.url}/ofrep/v1/evaluate/flags",
        content=body,
        headers={"Authorization": f"Bearer {deployment.sdk_key}", **headers},
    )
    assert response.status_code == status, response.text
    if code is not None:
        assert response.json()["errorCode"] == code
        assert response.json()["errorDetails"]


def test_x_api_key_header_is_accepted(deployment: Deployment) -> None:
    response = httpx.post(
        f"{deployment.url}/ofrep/v1/evaluate/flags/object-flag",
        json={"context": {"targetingKey": "user-1"}},
        headers={"X-API-Key": deployment.sdk_key},
    )
    assert response.status_code == 200, response.text
    assert response.json()["value"] == {"size": "xl", "items": [1, 2]}


def test_single_flag_answers_304_to_its_etag(deployment: Deployment) -> None:
    url = f"{deployment.url}/ofrep/v1/evaluate/flags/object-flag"
    headers = {"Authorization": f"Bearer {deployment.sdk_key}"}
    body = {"context": {"targetingKey": "user-1"}}
    first = httpx.post(url, json=body, headers=headers)
    etag = first.headers["ETag"]
    again = httpx.post(url, json=body, headers={**headers, "If-None-Match": etag})
    assert (again.status_code, again.content) == (304, b"")
    other_flag = httpx.post(url.replace("object-flag", "string-flag"), json=body, headers=headers)
    assert other_flag.headers["ETag"] != etag
