"""The routes `http.api.direct_routes` answers without FastAPI's solver give what FastAPI gives:
the same requests (good, unauthorized, forbidden, screened out, malformed) against one plane
through the API with and without the direct lane answer the same status, body and headers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.http.api.application import build_api
from flagstaff_server.http.api.direct_routes import find_route
from flagstaff_server.services.plane import ControlPlane
from support.in_process import asgi_client, control_plane

ADMIN = "direct-admin-token"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"
FLAG = "/api/v2/flags/p/f"


@pytest.fixture
async def plane() -> ControlPlane:
    plane = control_plane(InMemoryStore(), admin_token=ADMIN)
    async with asgi_client(build_api(plane, version="test"), token=ADMIN) as client:
        for path, body in (
            ("/api/v2/projects", {"key": "p", "name": "P"}),
            ("/api/v2/projects", {"key": "q", "name": "Q"}),
            ("/api/v2/flags/p", {"key": "f", "name": "F"}),
        ):
            assert (await client.post(path, json=body)).status_code == 201
    return plane


async def token(plane: ControlPlane, body: dict[str, Any]) -> str:
    async with asgi_client(build_api(plane, version="test"), token=ADMIN) as client:
        made = await client.post("/api/v2/tokens", json=body)
        assert made.status_code == 201, made.text
        secret: str = made.json()["token"]
        return secret


def answer(response: httpx.Response) -> tuple[int, list[tuple[str, str]], bytes]:
    return response.status_code, sorted(response.headers.multi_items()), response.content


async def test_direct_lane_answers_as_fastapi_does(plane: ControlPlane) -> None:
    reader = await token(plane, {"name": "r", "role": "reader"})
    other_project = await token(plane, {"name": "w", "role": "writer", "projectKey": "q"})
    policy = await token(
        plane,
        {
            "name": "pol",
            "inlineRole": [
                {"effect": "allow", "actions": ["viewProject"], "resources": ["proj/*"]},
            ],
        },
    )
    off = {"environmentKey": "production", "instructions": [{"kind": "turnFlagOff"}]}
    deep: Any = 1
    for _ in range(200):
        deep = [deep]
    requests: list[tuple[str, str, dict[str, str], bytes | None]] = [
        ("GET", FLAG, {}, None),
        ("GET", FLAG + "?env=production&env=test", {}, None),
        ("GET", FLAG + "?env=production,nowhere", {}, None),
        ("GET", "/api/v2/flags/p/missing", {}, None),
        ("GET", "/api/v2/flags/nowhere/f", {}, None),
        ("GET", FLAG + "?x=%00", {}, None),
        ("GET", "/api/v2/flags/p/f%00", {}, None),
        ("GET", FLAG, {"Authorization": ""}, None),
        ("GET", FLAG, {"Authorization": "api-unknown"}, None),
        ("GET", FLAG, {"Authorization": "sdk-key"}, None),
        ("GET", FLAG, {"Authorization": other_project}, None),
        ("GET", FLAG, {"Authorization": policy}, None),
        ("GET", FLAG, {"Authorization": reader}, None),
        ("GET", FLAG, {"Authorization": "", "Cookie": "flagstaff_session=stale"}, None),
        ("PATCH", FLAG, {"Authorization": reader, "Content-Type": SEMANTIC}, b"{}"),
        ("PATCH", FLAG, {"Authorization": policy, "Content-Type": SEMANTIC}, b"{}"),
        ("PATCH", FLAG, {"Content-Type": "text/plain"}, b"{}"),
        ("PATCH", FLAG, {}, b"{}"),
        ("PATCH", FLAG, {"Content-Type": SEMANTIC}, b"{not json"),
        ("PATCH", FLAG, {"Content-Type": SEMANTIC}, b""),
        ("PATCH", FLAG, {"Content-Type": SEMANTIC}, httpx.Request("P", "/", json=deep).content),
        ("PATCH", FLAG, {"Content-Type": SEMANTIC}, b'{"comment": "\\u0000"}'),
        ("PATCH", FLAG, {"Content-Type": SEMANTIC}, b'{"instructions": [{"kind": "fly"}]}'),
        ("PATCH", FLAG, {"Content-Type": SEMANTIC, "If-Match": "x"}, b"{}"),
        (
            "PATCH",
            FLAG,
            {"Content-Type": SEMANTIC, "If-Match": "999"},
            httpx.Request("P", "/", json=off).content,
        ),
        (
            "PATCH",
            "/api/v2/flags/p/missing",
            {"Content-Type": SEMANTIC},
            httpx.Request("P", "/", json=off).content,
        ),
        ("PATCH", FLAG, {"Content-Type": "application/json"}, b'[{"op": "bad"}]'),
        ("GET", "/api/v2/session/status", {}, None),
        ("GET", "/api/v2/session/status", {"Cookie": "flagstaff_session=stale"}, None),
        ("GET", FLAG + "/", {}, None),
        ("HEAD", FLAG, {}, None),
    ]
    async with (
        asgi_client(build_api(plane, version="test"), token=ADMIN) as direct,
        asgi_client(build_api(plane, version="test", direct_routes=False), token=ADMIN) as framed,
    ):
        for method, path, headers, body in requests:
            one = await direct.request(method, path, headers=headers, content=body)
            two = await framed.request(method, path, headers=headers, content=body)
            assert answer(one) == answer(two), (method, path, headers, body)
        # a patch that changes the flag: the same answer but for its version and dates
        for client, kind in ((direct, "turnFlagOn"), (framed, "turnFlagOff")):
            change = {"environmentKey": "production", "instructions": [{"kind": kind}]}
            patched = await client.patch(FLAG, json=change, headers={"Content-Type": SEMANTIC})
            assert patched.status_code == 200, patched.text
            assert patched.json()["environments"]["production"]["on"] is (kind == "turnFlagOn")


async def test_direct_lane_serves_its_routes_without_fastapis_router(plane: ControlPlane) -> None:
    for direct_routes, expected in ((True, 200), (False, 404)):
        app = build_api(plane, version="test", direct_routes=direct_routes)
        app.router.routes = []  # the app's own list of included routers; theirs stay
        async with asgi_client(app, token=ADMIN) as client:
            assert (await client.get(FLAG)).status_code == expected
            status = await client.get("/api/v2/session/status")
            assert status.status_code == expected


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("GET", FLAG, {"projectKey": "p", "featureFlagKey": "f"}),
        ("PATCH", FLAG, {"projectKey": "p", "featureFlagKey": "f"}),
        ("GET", "/api/v2/session/status", {}),
        ("DELETE", FLAG, None),
        ("HEAD", FLAG, None),
        ("GET", "/api/v2/flags/p/", None),
        ("GET", "/api/v2/flags//f", None),
        ("GET", "/api/v2/flags/p/f/", None),
        ("GET", "/api/v2/flags/p/f/x", None),
        ("GET", "/api/v2/flags/p", None),
        ("GET", "/api/v2/session/status/", None),
        ("PATCH", "/api/v2/session/status", None),
        ("GET", "/api/v2/segments/p/f", None),
        ("GET", "/flags/p/f", None),
    ],
)
def test_direct_routes_take_what_starlette_patterns_take(
    method: str, path: str, params: dict[str, str] | None
) -> None:
    """`{name}` is one non-empty segment; a trailing slash is FastAPI's to redirect."""
    found = find_route(method, path)
    assert (None if found is None else dict(found[1])) == params
