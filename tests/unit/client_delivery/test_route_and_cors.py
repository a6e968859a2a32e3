"""Client-side request routing (which credential and context form each path means) and the CORS
headers and preflight answer."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.delivery.client_route import handles, route_of
from flagstaff_server.delivery.cors import cors_headers, preflight_headers, with_cors

ENV = "0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", f"/sdk/evalx/{ENV}/contexts/eyJr", ("evalx", "client-side", ENV, "eyJr")),
        ("GET", f"/sdk/evalx/{ENV}/users/eyJr", ("evalx", "client-side", ENV, "eyJr")),
        ("REPORT", f"/sdk/evalx/{ENV}/context", ("evalx", "client-side", ENV, None)),
        ("REPORT", f"/sdk/evalx/{ENV}/user", ("evalx", "client-side", ENV, None)),
        ("GET", "/sdk/evalx/contexts/eyJr", ("evalx", "sdk", "", "eyJr")),
        ("REPORT", "/sdk/evalx/context", ("evalx", "sdk", "", None)),
        ("GET", "/msdk/evalx/users/eyJr", ("evalx", "mobile", "", "eyJr")),
        ("REPORT", "/msdk/evalx/context", ("evalx", "mobile", "", None)),
        ("GET", f"/eval/{ENV}/eyJr", ("stream", "client-side", ENV, "eyJr")),
        ("GET", f"/eval/{ENV}/ab/cd+e", ("stream", "client-side", ENV, "ab_cd-e")),
        ("REPORT", f"/eval/{ENV}", ("stream", "client-side", ENV, None)),
        ("GET", "/meval/eyJr", ("stream", "mobile", "", "eyJr")),
        ("REPORT", "/meval", ("stream", "mobile", "", None)),
        ("GET", f"/ping/{ENV}", ("ping", "client-side", ENV, None)),
        ("GET", "/mping", ("ping", "mobile", "", None)),
        ("GET", f"/sdk/goals/{ENV}", ("goals", "client-side", ENV, None)),
        ("POST", "/ofrep/v1/evaluate/flags", ("ofrep_bulk", "sdk", "", None)),
        ("POST", "/ofrep/v1/evaluate/flags/my-flag", ("ofrep_flag", "sdk", "", None)),
        ("GET", f"/ofrep/v1/sse/{ENV}", ("ofrep_sse", "client-side", ENV, None)),
    ],
)
def test_paths_route_to_their_endpoint(method: str, path: str, expected: tuple[Any, ...]) -> None:
    assert handles(path)
    route = route_of(method, path)
    assert route is not None
    assert (route.name, route.credential, route.env_id, route.context) == expected


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", f"/sdk/evalx/{ENV}/contexts/eyJr"),
        ("GET", f"/sdk/evalx/{ENV}/context"),
        ("GET", "/ofrep/v1/evaluate/flags"),
        ("POST", "/ofrep/v2/evaluate/flags"),
        ("GET", f"/eval/{ENV}"),
        ("GET", "/sdk/evalx/elsewhere"),
    ],
)
def test_other_methods_and_shapes_do_not_route(method: str, path: str) -> None:
    assert route_of(method, path) is None


def test_server_side_and_event_paths_are_not_client_delivery() -> None:
    for path in ("/all", "/sdk/latest-all", "/sdk/flags/x", "/events/bulk/x", "/api/v2/flags"):
        assert not handles(path)


def test_cors_headers_echo_the_origin_and_expose_etag() -> None:
    headers = dict(cors_headers(b"http://a.test"))
    assert headers[b"access-control-allow-origin"] == b"http://a.test"
    assert b"ETag" in headers[b"access-control-expose-headers"]
    assert b"Date" in headers[b"access-control-expose-headers"]
    assert cors_headers(b"") == []


def test_preflight_allows_what_browser_sdks_send() -> None:
    headers = dict(preflight_headers(b"http://a.test"))
    allowed = {h.strip().lower() for h in headers[b"access-control-allow-headers"].split(b",")}
    assert {
        b"content-type",
        b"x-launchdarkly-user-agent",
        b"x-launchdarkly-event-schema",
        b"x-launchdarkly-payload-id",
        b"x-launchdarkly-wrapper",
        b"x-launchdarkly-tags",
        b"if-none-match",
        b"cache-control",
        b"authorization",
    } <= allowed
    assert headers[b"access-control-max-age"] == b"300"
    assert b"REPORT" in headers[b"access-control-allow-methods"]


async def test_with_cors_answers_preflights_and_decorates_responses() -> None:
    calls: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        calls.append(scope["method"])
        await send({"type": "http.response.start", "status": 202, "headers": [(b"x", b"1")]})
        await send({"type": "http.response.body", "body": b""})

    wrapped = with_cors(app)
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b""}

    origin = [(b"origin", b"http://a.test")]
    await wrapped({"type": "http", "method": "OPTIONS", "headers": origin}, receive, send)
    assert (sent[0]["status"], calls) == (204, [])
    await wrapped({"type": "http", "method": "POST", "headers": origin}, receive, send)
    headers = dict(sent[2]["headers"])
    assert (sent[2]["status"], headers[b"x"]) == (202, b"1")
    assert headers[b"access-control-allow-origin"] == b"http://a.test"
