"""Access tokens carrying an inline policy (LaunchDarkly's `inlineRole`): every route asks the
policy about its declared action (`http/api/route_actions.py`) and a 403 names the action and
resource refused; a flag patch needs every action its instructions or paths imply. The route
walk fails for any route of the OpenAPI document that declares no action."""

from __future__ import annotations

from typing import Any

import httpx
from flagstaff_server.domain.policy import parse_specifier
from flagstaff_server.domain.policy_catalog import LAUNCHDARKLY_ACTIONS
from flagstaff_server.http.api.route_actions import ROUTE_ACTIONS, Needs, resource_text
from platform_api import ADMIN, create_project, problem

SEMANTIC = {"Content-Type": "application/json; domain-model=launchdarkly.semanticpatch"}
TOGGLE_PRODUCTION = [
    {"effect": "allow", "actions": ["viewProject"], "resources": ["proj/*"]},
    {"effect": "allow", "actions": ["updateOn"], "resources": ["proj/*:env/production:flag/*"]},
]


async def policy_token(client: httpx.AsyncClient, statements: list[dict[str, Any]]) -> str:
    body = {"name": "policy token", "inlineRole": statements}
    response = await client.post("/api/v2/tokens", json=body, headers=ADMIN)
    assert response.status_code == 201, response.text
    assert response.json()["inlineRole"] == statements
    secret: str = response.json()["token"]
    return secret


async def with_flag(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    made = await client.post("/api/v2/flags/shop", json={"key": "f", "name": "F"}, headers=ADMIN)
    assert made.status_code == 201, made.text


async def test_every_route_of_the_openapi_document_declares_its_action(
    client: httpx.AsyncClient,
) -> None:
    spec = (await client.get("/api/v2/openapi.json")).json()
    routes = {
        (method.upper(), path)
        for path, operations in spec["paths"].items()
        for method in operations
        if not path.startswith("/api/v2/docs")
    }

    undeclared = sorted(routes - set(ROUTE_ACTIONS))
    assert not undeclared, f"declare these routes in http/api/route_actions.py: {undeclared}"
    assert not sorted(set(ROUTE_ACTIONS) - routes), "route_actions names routes that are gone"
    for (method, path), declared in ROUTE_ACTIONS.items():
        if isinstance(declared, Needs):
            assert set(declared.actions) <= LAUNCHDARKLY_ACTIONS, (method, path)
            params = {name.strip("{}"): "x" for name in path.split("/") if name.startswith("{")}
            parse_specifier(resource_text(declared.resource, params), path=f"{method} {path}")


async def test_a_policy_token_may_toggle_production_and_nothing_more(
    client: httpx.AsyncClient,
) -> None:
    await with_flag(client)
    token = {"Authorization": await policy_token(client, TOGGLE_PRODUCTION)}

    read = await client.get("/api/v2/flags/shop/f", headers=token)
    assert read.status_code == 200, read.text
    toggle = {"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]}
    on = await client.patch("/api/v2/flags/shop/f", json=toggle, headers={**token, **SEMANTIC})
    assert on.status_code == 200, on.text
    assert on.json()["environments"]["production"]["on"] is True

    with_rule = {**toggle, "instructions": [{"kind": "turnFlagOff"}, {"kind": "addRule"}]}
    refused = await client.patch(
        "/api/v2/flags/shop/f", json=with_rule, headers={**token, **SEMANTIC}
    )
    body = problem(refused, 403)
    assert (body["action"], body["resource"]) == ("updateRules", "proj/shop:env/production:flag/f")
    still = await client.get("/api/v2/flags/shop/f", headers=ADMIN)
    assert still.json()["environments"]["production"]["on"] is True

    in_test = [{"op": "replace", "path": "/environments/test/on", "value": True}]
    json_refused = problem(
        await client.patch("/api/v2/flags/shop/f", json=in_test, headers=token), 403
    )
    assert (json_refused["action"], json_refused["resource"]) == (
        "updateOn",
        "proj/shop:env/test:flag/f",
    )


async def test_route_checks_name_the_action_and_resource_refused(
    client: httpx.AsyncClient,
) -> None:
    await with_flag(client)
    token = {"Authorization": await policy_token(client, TOGGLE_PRODUCTION)}

    cases = [
        ("DELETE", "/api/v2/flags/shop/f", None, "deleteFlag", "proj/shop:env/*:flag/f"),
        ("POST", "/api/v2/flags/shop", {"key": "g", "name": "G"}, "createFlag", None),
        ("POST", "/api/v2/tokens", {"name": "n", "role": "reader"}, "createAccessToken", None),
        ("POST", "/api/v2/projects", {"key": "p", "name": "P"}, "createProject", "proj/*"),
    ]
    for method, path, json, action, resource in cases:
        body = problem(await client.request(method, path, json=json, headers=token), 403)
        assert body["action"] == action, (path, body)
        if resource is not None:
            assert body["resource"] == resource
    assert (await client.get("/api/v2/flags/shop/f", headers=ADMIN)).status_code == 200


async def test_deny_in_the_inline_policy_wins(client: httpx.AsyncClient) -> None:
    await with_flag(client)
    statements = [
        {"effect": "allow", "actions": ["*"], "resources": ["proj/*"]},
        {"effect": "deny", "actions": ["viewProject"], "resources": ["proj/shop"]},
    ]
    token = {"Authorization": await policy_token(client, statements)}

    body = problem(await client.get("/api/v2/flags/shop", headers=token), 403)
    assert (body["action"], body["resource"]) == ("viewProject", "proj/shop")


async def test_a_bad_inline_policy_is_400_naming_the_field(client: httpx.AsyncClient) -> None:
    bad = {"name": "n", "inlineRole": [{"effect": "maybe", "actions": ["*"], "resources": ["x"]}]}
    response = await client.post("/api/v2/tokens", json=bad, headers=ADMIN)
    assert problem(response, 400)["path"] == "/inlineRole/0/effect"
    unknown = {
        "name": "n",
        "inlineRole": [{"effect": "allow", "actions": ["fly"], "resources": ["proj/*"]}],
    }
    response = await client.post("/api/v2/tokens", json=unknown, headers=ADMIN)
    assert problem(response, 400)["path"] == "/inlineRole/0/actions/0"
    no_role = await client.post("/api/v2/tokens", json={"name": "n"}, headers=ADMIN)
    assert problem(no_role, 400)["path"] == "/role"
