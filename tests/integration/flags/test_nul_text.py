"""NUL in request text, over each store: PostgreSQL's text cannot hold it, so it failed there as
a 500 for a project name. It is refused before any route runs: 400 naming the member for a body,
400 for a query, 404 for a path (no key can hold it). Nothing is written."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from flag_api import PROJECT, create_flag

NUL = "\x00"


@pytest.mark.parametrize(
    ("path", "body", "member"),
    [
        ("/api/v2/projects", {"key": "q", "name": f"Q{NUL}"}, "/name"),
        ("/api/v2/projects", {"key": "q", "name": "Q", "tags": ["ok", f"t{NUL}"]}, "/tags/1"),
        (f"/api/v2/flags/{PROJECT}", {"key": "f", "name": "F", "description": NUL}, "/description"),
        (
            f"/api/v2/flags/{PROJECT}",
            {"key": "f", "name": "F", "customProperties": {f"a{NUL}": {"name": "x", "value": []}}},
            f"/customProperties/a{NUL}",
        ),
        (f"/api/v2/segments/{PROJECT}/production", {"key": "s", "name": f"S{NUL}"}, "/name"),
    ],
)
async def test_nul_in_a_body_is_a_400_naming_the_member_and_nothing_is_written(
    api: httpx.AsyncClient, path: str, body: dict[str, Any], member: str
) -> None:
    refused = await api.post(path, json=body)
    assert refused.status_code == 400, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert (refused.json()["code"], refused.json()["path"]) == ("invalid_request", member)
    listed = (await api.get(path)).json()
    assert body["key"] not in [item["key"] for item in listed["items"]]


async def test_nul_in_a_patch_a_query_or_a_path_is_refused(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f")
    flag = f"/api/v2/flags/{PROJECT}/f"
    patched = await api.patch(flag, json=[{"op": "replace", "path": "/name", "value": NUL}])
    assert (patched.status_code, patched.json()["path"]) == (400, "/0/value")
    assert (await api.get(flag)).json()["name"] == "f"
    query = await api.get(f"/api/v2/flags/{PROJECT}", params={"env": f"production{NUL}"})
    assert (query.status_code, query.json()["code"]) == (400, "invalid_request")
    missing = await api.get(f"/api/v2/flags/{PROJECT}/f%00")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    # a body that only mentions the escape, as text, is no NUL
    described = await api.patch(
        flag, json=[{"op": "replace", "path": "/description", "value": "\\u0000"}]
    )
    assert described.status_code == 200, described.text
    assert described.json()["description"] == "\\u0000"
