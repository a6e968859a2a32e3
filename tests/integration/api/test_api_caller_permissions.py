"""`GET /api/v2/caller/permissions`: for each resource named, the actions of its type the caller
is allowed and denied, by the rules the routes apply: a member's custom role, a fixed-role token
and its scope, an admin. Bad input is a 400 naming the resource's position."""

from __future__ import annotations

from typing import Any

import httpx
from platform_api import ADMIN, create_project, problem
from test_api_members import TOGGLER, join

FLAG_IN_PRODUCTION = "proj/default:env/production:flag/checkout"
FLAG_IN_TEST = "proj/default:env/test:flag/checkout"
NEW_FLAGS = "proj/default:env/*:flag/*"


async def permissions(client: httpx.AsyncClient, *resources: str, **headers: str) -> Any:
    response = await client.get(
        "/api/v2/caller/permissions", params=[("resource", r) for r in resources], headers=headers
    )
    assert response.status_code == 200, response.text
    return {item["resource"]: set(item["allowed"]) for item in response.json()["items"]}


async def test_a_member_with_a_custom_role_is_told_only_what_it_allows(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.post("/api/v2/roles", json=TOGGLER, headers=ADMIN)).status_code == 201
    await join(client, "ada@example.com", customRoles=["toggler"])
    allowed = await permissions(client, FLAG_IN_PRODUCTION, FLAG_IN_TEST, NEW_FLAGS)
    assert allowed == {FLAG_IN_PRODUCTION: {"updateOn"}, FLAG_IN_TEST: set(), NEW_FLAGS: set()}
    project = await permissions(client, "proj/default")
    assert project == {"proj/default": {"viewProject"}}


async def test_tokens_are_told_what_their_role_and_scope_allow(client: httpx.AsyncClient) -> None:
    admin = await permissions(client, FLAG_IN_PRODUCTION, NEW_FLAGS, "role/*", **ADMIN)
    assert {"updateOn", "updateRules", "deleteFlag"} <= admin[FLAG_IN_PRODUCTION]
    assert "createFlag" in admin[NEW_FLAGS]
    assert "createRole" in admin["role/*"]
    await create_project(client, "default")
    made = await client.post(
        "/api/v2/tokens",
        json={"name": "ci", "role": "writer", "projectKey": "default", "environmentKey": "test"},
        headers=ADMIN,
    )
    assert made.status_code == 201, made.text
    secret = made.json()["token"]
    scoped = await permissions(
        client, FLAG_IN_PRODUCTION, FLAG_IN_TEST, NEW_FLAGS, "role/*", Authorization=secret
    )
    assert scoped[FLAG_IN_PRODUCTION] == scoped[NEW_FLAGS] == scoped["role/*"] == set()
    assert {"updateOn", "updateRules", "updateTargets"} <= scoped[FLAG_IN_TEST]


async def test_a_resource_without_known_actions_is_a_400_at_its_position(
    client: httpx.AsyncClient,
) -> None:
    answer = await client.get(
        "/api/v2/caller/permissions",
        params=[("resource", FLAG_IN_TEST), ("resource", "nothing/x")],
        headers=ADMIN,
    )
    assert problem(answer, 400)["path"] == "/resource/1"
    problem(await client.get("/api/v2/caller/permissions", headers=ADMIN), 400)
