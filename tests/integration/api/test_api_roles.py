"""Custom roles over the API (`/api/v2/roles`, LaunchDarkly's shapes): create, read by key or
`_id`, JSON Patch, delete (409 while assigned); bad input is a 400 naming the field; every write
is an audit entry naming who made it; a token carrying a role by `customRoleIds` is decided by
the role's current policy on every request."""

from __future__ import annotations

from typing import Any

import httpx
from platform_api import ADMIN, audited, create_project, problem

TOGGLER = {
    "key": "toggler",
    "name": "Toggle production",
    "description": "May turn flags on and off in production",
    "policy": [
        {"effect": "allow", "actions": ["viewProject"], "resources": ["proj/*"]},
        {"effect": "allow", "actions": ["updateOn"], "resources": ["proj/*:env/production:flag/*"]},
    ],
}
SEMANTIC = {"Content-Type": "application/json; domain-model=launchdarkly.semanticpatch"}
TURN_ON = {"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]}


async def create_role(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/api/v2/roles", json=body, headers=ADMIN)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def role_token(client: httpx.AsyncClient, *role_ids: str) -> dict[str, str]:
    body = {"name": "role token", "customRoleIds": list(role_ids)}
    response = await client.post("/api/v2/tokens", json=body, headers=ADMIN)
    assert response.status_code == 201, response.text
    return {"Authorization": response.json()["token"]}


async def test_a_role_is_created_read_listed_patched_and_deleted(
    client: httpx.AsyncClient,
) -> None:
    created = await create_role(client, TOGGLER)
    assert created["key"] == "toggler"
    assert created["basePermissions"] == "no_access"
    assert created["policy"] == TOGGLER["policy"]
    assert created["assignedTo"] == {"membersCount": 0, "teamsCount": 0}

    by_id = await client.get(f"/api/v2/roles/{created['_id']}", headers=ADMIN)
    assert by_id.status_code == 200
    assert by_id.json()["key"] == "toggler"
    listed = (await client.get("/api/v2/roles", headers=ADMIN)).json()
    assert [item["key"] for item in listed["items"]] == ["toggler"]

    append = {"effect": "allow", "actions": ["updateRules"], "resources": ["proj/*:env/*:flag/*"]}
    patch = {
        "comment": "rules too",
        "patch": [
            {"op": "add", "path": "/policy/-", "value": append},
            {"op": "replace", "path": "/name", "value": "Togglers"},
        ],
    }
    patched = await client.patch("/api/v2/roles/toggler", json=patch, headers=ADMIN)
    assert patched.status_code == 200, patched.text
    assert patched.json()["policy"][-1] == append
    assert patched.json()["name"] == "Togglers"
    assert patched.json()["_version"] == 2

    deleted = await client.delete("/api/v2/roles/toggler", headers=ADMIN)
    assert deleted.status_code == 204
    problem(await client.get("/api/v2/roles/toggler", headers=ADMIN), 404)

    assert await audited(client, "role") == [
        ("createRole", "role/toggler", "admin-token"),
        ("updateRole", "role/toggler", "admin-token"),
        ("deleteRole", "role/toggler", "admin-token"),
    ]


async def test_bad_roles_are_400_naming_the_field(client: httpx.AsyncClient) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({**TOGGLER, "key": "no spaces"}, "/key"),
        ({key: value for key, value in TOGGLER.items() if key != "name"}, "/name"),
        ({key: value for key, value in TOGGLER.items() if key != "policy"}, "/policy"),
        ({**TOGGLER, "policy": [{"effect": "maybe", "actions": ["*"]}]}, "/policy/0/effect"),
        (
            {**TOGGLER, "policy": [{"effect": "allow", "actions": ["fly"], "resources": ["x/*"]}]},
            "/policy/0/actions/0",
        ),
        ({**TOGGLER, "basePermissions": "admin"}, "/basePermissions"),
        ({**TOGGLER, "colour": "red"}, "/colour"),
    ]
    for body, path in cases:
        response = await client.post("/api/v2/roles", json=body, headers=ADMIN)
        assert problem(response, 400)["path"] == path, body
    await create_role(client, TOGGLER)
    problem(await client.post("/api/v2/roles", json=TOGGLER, headers=ADMIN), 409)
    bad_patch = [{"op": "replace", "path": "/policy/0/effect", "value": "perhaps"}]
    response = await client.patch("/api/v2/roles/toggler", json=bad_patch, headers=ADMIN)
    assert problem(response, 400)["path"] == "/policy/0/effect"
    rekey = [{"op": "replace", "path": "/key", "value": "other"}]
    response = await client.patch("/api/v2/roles/toggler", json=rekey, headers=ADMIN)
    assert problem(response, 400)["path"] == "/key"
    unknown = await client.post(
        "/api/v2/tokens", json={"name": "n", "customRoleIds": ["nope"]}, headers=ADMIN
    )
    assert problem(unknown, 400)["path"] == "/customRoleIds/0"


async def test_a_token_with_a_custom_role_follows_its_current_policy(
    client: httpx.AsyncClient,
) -> None:
    await create_project(client, "shop")
    made = await client.post("/api/v2/flags/shop", json={"key": "f", "name": "F"}, headers=ADMIN)
    assert made.status_code == 201, made.text
    role = await create_role(client, TOGGLER)
    token = await role_token(client, role["key"])

    on = await client.patch("/api/v2/flags/shop/f", json=TURN_ON, headers={**token, **SEMANTIC})
    assert on.status_code == 200, on.text
    rule = {**TURN_ON, "instructions": [{"kind": "addRule", "clauses": []}]}
    refused = problem(
        await client.patch("/api/v2/flags/shop/f", json=rule, headers={**token, **SEMANTIC}), 403
    )
    assert (refused["action"], refused["resource"]) == (
        "updateRules",
        "proj/shop:env/production:flag/f",
    )

    deny = {"effect": "deny", "actions": ["updateOn"], "resources": ["proj/*:env/*:flag/*"]}
    await client.patch(
        "/api/v2/roles/toggler",
        json=[{"op": "add", "path": "/policy/-", "value": deny}],
        headers=ADMIN,
    )
    off = {**TURN_ON, "instructions": [{"kind": "turnFlagOff"}]}
    denied = problem(
        await client.patch("/api/v2/flags/shop/f", json=off, headers={**token, **SEMANTIC}), 403
    )
    assert denied["action"] == "updateOn"

    held = problem(await client.delete("/api/v2/roles/toggler", headers=ADMIN), 409)
    assert "token" in held["message"]


async def test_the_most_permissive_of_a_tokens_roles_wins(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    deny_all = await create_role(
        client,
        {
            "key": "nothing",
            "name": "Nothing",
            "policy": [{"effect": "deny", "actions": ["*"], "resources": ["proj/*"]}],
        },
    )
    reader = await create_role(
        client, {"key": "looker", "name": "Looker", "policy": [], "basePermissions": "reader"}
    )
    alone = await role_token(client, deny_all["_id"])
    problem(await client.get("/api/v2/flags/shop", headers=alone), 403)
    both = await role_token(client, deny_all["_id"], reader["_id"])
    assert (await client.get("/api/v2/flags/shop", headers=both)).status_code == 200
    problem(
        await client.post("/api/v2/flags/shop", json={"key": "g", "name": "G"}, headers=both), 403
    )
