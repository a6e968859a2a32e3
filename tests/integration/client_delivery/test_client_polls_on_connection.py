"""Client-side evalx polls (GET and REPORT) and CORS preflights over real sockets, on both paths:
answered on the connection (`delivery.connection` + `ClientDelivery.evalx_answer`, as `flagstaff
serve` runs) and through the ASGI app. Both give the same answers: results, ETag and 304, CORS on
200, 304 and errors, the preflight, REPORT bodies, bad contexts, missing keys. A spy on
`ClientDelivery.__call__` records what reaches the app: on the connection none of these requests
may, while an unknown environment id must (the app waits for a feed check before its 404), which
shows the spy sees what it should."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from client_server import Deployment, b64, serving
from flagstaff_server.delivery.client_side import ClientDelivery

USER = {"kind": "user", "key": "poll-1"}
ORIGIN = "http://page.test:8123"
BROWSER_FLAGS = {"bool-flag", "string-flag", "number-flag", "float-flag", "object-flag"}
Served = tuple[Deployment, bool, list[str]]


@pytest.fixture(scope="module", params=[True, False], ids=["connection", "asgi"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    reached: list[str] = []
    original = ClientDelivery.__call__

    async def spy(self: ClientDelivery, scope: Any, receive: Any, send: Any) -> None:
        reached.append(f"{scope['method']} {scope['path']}")
        await original(self, scope, receive, send)

    patch = pytest.MonkeyPatch()
    patch.setattr(ClientDelivery, "__call__", spy)
    try:
        with serving(Path(tmp_path_factory.mktemp("polls")), direct=request.param) as (
            deployment,
            _,
        ):
            yield deployment, request.param, reached
    finally:
        patch.undo()


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    served[2].clear()
    with httpx.Client(base_url=served[0].url, timeout=10, headers={"Origin": ORIGIN}) as client:
        yield client


def _reached_app(served: Served, expected: int) -> None:
    _deployment, direct, reached = served
    assert len(reached) == (0 if direct else expected), reached


def _cors(response: httpx.Response) -> None:
    assert response.headers["access-control-allow-origin"] == ORIGIN
    assert "ETag" in response.headers["access-control-expose-headers"]
    assert response.headers["vary"] == "Origin"


def _report(
    http: httpx.Client, deployment: Deployment, body: bytes, content_type: str
) -> httpx.Response:
    path = f"/sdk/evalx/{deployment.client_side_id}/context"
    return http.request("REPORT", path, content=body, headers={"Content-Type": content_type})


def test_evalx_get_and_report_give_results_etags_304s_and_cors(
    served: Served, http: httpx.Client
) -> None:
    deployment = served[0]
    path = f"/sdk/evalx/{deployment.client_side_id}/contexts/{b64(USER)}"
    first = http.get(path)
    assert first.status_code == 200, first.text
    assert set(first.json()) == BROWSER_FLAGS
    assert first.headers["content-type"] == "application/json"
    assert first.headers["cache-control"] == "no-cache"
    assert int(first.headers["content-length"]) == len(first.content)
    _cors(first)
    etag = first.headers["etag"]
    cached = http.get(path, headers={"If-None-Match": etag})
    assert (cached.status_code, cached.content, cached.headers["etag"]) == (304, b"", etag)
    assert "content-length" not in cached.headers
    _cors(cached)
    report = _report(http, deployment, json.dumps(USER).encode(), "application/json")
    assert (report.status_code, report.json(), report.headers["etag"]) == (200, first.json(), etag)
    _cors(report)
    mobile = http.request(
        "REPORT",
        "/msdk/evalx/context",
        content=json.dumps(USER),
        headers={"Content-Type": "application/json", "Authorization": deployment.mobile_key},
    )
    assert set(mobile.json()) == BROWSER_FLAGS | {"mobile-flag"}
    server = http.get(
        f"/sdk/evalx/contexts/{b64(USER)}?withReasons=true",
        headers={"Authorization": deployment.sdk_key},
    )
    assert set(server.json()) == BROWSER_FLAGS | {"mobile-flag", "server-flag"}
    assert server.json()["bool-flag"]["reason"] == {"kind": "FALLTHROUGH"}
    _reached_app(served, 5)


def test_the_preflight_is_answered_with_the_browser_sdk_headers(
    served: Served, http: httpx.Client
) -> None:
    response = http.options(
        f"/sdk/evalx/{served[0].client_side_id}/context",
        headers={"Access-Control-Request-Method": "REPORT"},
    )
    assert (response.status_code, response.content) == (204, b"")
    assert response.headers["content-length"] == "0"
    assert response.headers["access-control-allow-origin"] == ORIGIN
    assert "REPORT" in response.headers["access-control-allow-methods"]
    assert "x-launchdarkly-user-agent" in response.headers["access-control-allow-headers"].lower()
    assert response.headers["access-control-max-age"] == "300"
    _reached_app(served, 1)


def test_bad_requests_get_the_same_problems_with_cors(served: Served, http: httpx.Client) -> None:
    deployment = served[0]
    bad = http.get(f"/sdk/evalx/{deployment.client_side_id}/contexts/{b64({'kind': 'user'})}")
    assert bad.status_code == 400
    assert bad.headers["content-type"] == "application/problem+json"
    assert bad.json()["status"] == 400
    _cors(bad)
    plain = _report(http, deployment, json.dumps(USER).encode(), "text/plain")
    assert plain.status_code == 415
    broken = _report(http, deployment, b"{", "application/json")
    assert (broken.status_code, broken.json()["path"]) == (400, "context")
    missing = http.get(f"/msdk/evalx/contexts/{b64(USER)}")
    assert (missing.status_code, missing.json()["code"]) == (401, "unauthorized")
    _cors(missing)
    _reached_app(served, 4)


def test_an_unknown_environment_id_goes_to_the_app_for_its_404(
    served: Served, http: httpx.Client
) -> None:
    response = http.get(f"/sdk/evalx/{'0' * 24}/contexts/{b64(USER)}")
    assert response.status_code == 404
    _cors(response)
    assert served[2] == [f"GET /sdk/evalx/{'0' * 24}/contexts/{b64(USER)}"]


def test_pipelined_polls_are_answered_in_order_on_one_connection(served: Served) -> None:
    deployment = served[0]
    path = f"/sdk/evalx/{deployment.client_side_id}/contexts/{b64(USER)}"
    etag = httpx.get(deployment.url + path).headers["etag"]
    host = deployment.url.removeprefix("http://")
    requests = [
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n",
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nIf-None-Match: {etag}\r\n\r\n",
        f"OPTIONS {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: {ORIGIN}\r\n\r\n",
    ]
    address, port = host.split(":")
    with socket.create_connection((address, int(port)), timeout=10) as connection:
        connection.sendall("".join(requests).encode())  # one write: all three arrive together
        received = b""
        while received.count(b"HTTP/1.1 ") < 3 or not received.endswith(b"\r\n\r\n"):
            chunk = connection.recv(65536)
            assert chunk, f"the connection closed after {received!r}"
            received += chunk
        statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", received)
        assert statuses == [b"200", b"304", b"204"]
        # keep-alive: the connection still answers
        connection.sendall(requests[1].encode())
        assert connection.recv(65536).startswith(b"HTTP/1.1 304 ")
