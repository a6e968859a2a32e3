"""Teams over the API (`/api/v2/teams`, LaunchDarkly's shapes and semantic patch): a team's
custom roles are added to its members' access at once (most permissive wins); each instruction
needs its own action; names a team holds must exist; a flag's maintainer team must be a real
team. Bad input is a 400 naming the field; every change is audited under the caller."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from platform_api import ADMIN, audited, create_project, problem
from test_api_members import PASSWORD, invite

# One store suffices: teams are keyed documents, whose SQL side test_api_roles.py runs.
pytestmark = pytest.mark.parametrize("server", ["memory"], indirect=True)

SEMANTIC = {"Content-Type": "application/json; domain-model=launchdarkly.semanticpatch"}
LOOKER = {
    "key": "looker",
    "name": "Looks at projects",
    "policy": [{"effect": "allow", "actions": ["viewProject"], "resources": ["proj/*"]}],
}


async def setup(client: httpx.AsyncClient) -> str:
    """A project, the role `looker`, and a `no_access` member signed in: their id."""
    await create_project(client, "shop")
    assert (await client.post("/api/v2/roles", json=LOOKER, headers=ADMIN)).status_code == 201
    member = await invite(client, "ada@example.com", role="no_access")
    accepted = await client.post(
        "/api/v2/members/invitations",
        json={"invitation": member["_invitation"], "password": PASSWORD},
    )
    assert accepted.status_code == 200, accepted.text
    signed = await client.post(
        "/api/v2/session", json={"email": "ada@example.com", "password": PASSWORD}
    )
    assert signed.status_code == 201, signed.text
    member_id: str = member["_id"]
    return member_id


async def patch_team(
    client: httpx.AsyncClient, key: str, *instructions: dict[str, Any], headers: Any = ADMIN
) -> httpx.Response:
    return await client.patch(
        f"/api/v2/teams/{key}",
        json={"instructions": list(instructions), "comment": "test"},
        headers={**headers, **SEMANTIC},
    )


async def test_a_teams_roles_reach_its_members_at_once(client: httpx.AsyncClient) -> None:
    member = await setup(client)
    refused = problem(await client.get("/api/v2/flags/shop"), 403)
    assert (refused["action"], refused["resource"]) == ("viewProject", "proj/shop")

    team = {"key": "ops", "name": "Ops", "memberIDs": [member], "customRoleKeys": ["looker"]}
    created = await client.post("/api/v2/teams", json=team, headers=ADMIN)
    assert created.status_code == 201, created.text
    assert created.json()["roles"]["items"] == [{"key": "looker", "name": "Looks at projects"}]
    assert (await client.get("/api/v2/flags/shop")).status_code == 200
    shown = (await client.get(f"/api/v2/members/{member}", headers=ADMIN)).json()
    assert shown["teams"] == [{"key": "ops", "name": "Ops", "customRoleKeys": ["looker"]}]
    listed = await client.get("/api/v2/members", params={"filter": "team:ops"}, headers=ADMIN)
    assert [m["_id"] for m in listed.json()["items"]] == [member]

    held = problem(await client.delete("/api/v2/roles/looker", headers=ADMIN), 409)
    assert "team ops" in held["message"]

    removed = await patch_team(client, "ops", {"kind": "removeMembers", "values": [member]})
    assert removed.status_code == 200, removed.text
    problem(await client.get("/api/v2/flags/shop"), 403)


async def test_team_instructions_edit_the_team_and_are_audited(client: httpx.AsyncClient) -> None:
    member = await setup(client)
    created = await client.post("/api/v2/teams", json={"key": "ops", "name": "Ops"}, headers=ADMIN)
    assert created.status_code == 201, created.text
    edited = await patch_team(
        client,
        "ops",
        {"kind": "updateName", "value": "Operations"},
        {"kind": "updateDescription", "value": "Runs things"},
        {"kind": "addMembers", "values": [member]},
        {"kind": "addCustomRoles", "values": ["looker"]},
        {"kind": "addPermissionGrants", "actionSet": "maintainTeam", "memberIDs": [member]},
    )
    assert edited.status_code == 200, edited.text
    team = edited.json()
    assert (team["name"], team["description"], team["memberIDs"]) == (
        "Operations",
        "Runs things",
        [member],
    )
    assert team["maintainers"]["items"] == [{"_id": member, "email": "ada@example.com"}]
    assert team["_version"] == 2
    emptied = await patch_team(
        client,
        "ops",
        {"kind": "removeCustomRoles", "values": ["looker"]},
        {"kind": "removePermissionGrants", "actionSet": "maintainTeam", "memberIDs": [member]},
    )
    assert (emptied.json()["customRoleKeys"], emptied.json()["maintainers"]["totalCount"]) == (
        [],
        0,
    )
    assert (await client.delete("/api/v2/teams/ops", headers=ADMIN)).status_code == 204
    problem(await client.get("/api/v2/teams/ops", headers=ADMIN), 404)
    assert await audited(client, "team") == [
        ("createTeam", "team/ops", "admin-token"),
        ("updateTeam", "team/ops", "admin-token"),
        ("updateTeam", "team/ops", "admin-token"),
        ("deleteTeam", "team/ops", "admin-token"),
    ]


async def test_bad_team_input_is_400_naming_the_field(client: httpx.AsyncClient) -> None:
    await setup(client)
    for body, path in [
        ({"key": "no spaces", "name": "N"}, "/key"),
        ({"key": "ops"}, "/name"),
        ({"key": "ops", "name": "Ops", "memberIDs": ["nobody"]}, "/memberIDs/0"),
        ({"key": "ops", "name": "Ops", "customRoleKeys": ["nope"]}, "/customRoleKeys/0"),
        (
            {"key": "ops", "name": "Ops", "permissionGrants": [{"actionSet": "other"}]},
            "/permissionGrants/0/actionSet",
        ),
    ]:
        response = await client.post("/api/v2/teams", json=body, headers=ADMIN)
        assert problem(response, 400)["path"] == path, body
    assert (
        await client.post("/api/v2/teams", json={"key": "ops", "name": "O"}, headers=ADMIN)
    ).status_code == 201
    for instruction, path in [
        ({"kind": "fly"}, "/instructions/0/kind"),
        ({"kind": "addMembers", "values": ["nobody"]}, "/instructions/0/values/0"),
        ({"kind": "addCustomRoles", "values": ["nope"]}, "/instructions/0/values/0"),
        ({"kind": "updateName", "value": 3}, "/instructions/0/value"),
        (
            {"kind": "addPermissionGrants", "actionSet": "x", "memberIDs": []},
            "/instructions/0/actionSet",
        ),
    ]:
        response = await patch_team(client, "ops", instruction)
        assert problem(response, 400)["path"] == path, instruction
    assert (await client.get("/api/v2/teams/ops", headers=ADMIN)).json()["_version"] == 1


async def test_each_team_instruction_needs_its_action(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    assert (
        await client.post("/api/v2/teams", json={"key": "ops", "name": "O"}, headers=ADMIN)
    ).status_code == 201
    statements = [{"effect": "allow", "actions": ["updateTeamName"], "resources": ["team/*"]}]
    made = await client.post(
        "/api/v2/tokens", json={"name": "namer", "inlineRole": statements}, headers=ADMIN
    )
    token = {"Authorization": made.json()["token"]}
    renamed = await patch_team(client, "ops", {"kind": "updateName", "value": "Ops"}, headers=token)
    assert renamed.status_code == 200, renamed.text
    refused = problem(
        await patch_team(
            client,
            "ops",
            {"kind": "updateName", "value": "Ops 2"},
            {"kind": "addCustomRoles", "values": []},
            headers=token,
        ),
        403,
    )
    assert (refused["action"], refused["resource"]) == ("updateTeamCustomRoles", "team/ops")


async def test_a_flags_maintainer_team_must_exist(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    made = await client.post("/api/v2/flags/shop", json={"key": "f", "name": "F"}, headers=ADMIN)
    assert made.status_code == 201, made.text
    assert (
        await client.post("/api/v2/teams", json={"key": "ops", "name": "O"}, headers=ADMIN)
    ).status_code == 201
    body = {"instructions": [{"kind": "updateMaintainerTeam", "value": "ghosts"}]}
    response = await client.patch("/api/v2/flags/shop/f", json=body, headers={**ADMIN, **SEMANTIC})
    assert problem(response, 400)["path"] == "/instructions/0/value"
    body = {"instructions": [{"kind": "updateMaintainerTeam", "value": "ops"}]}
    response = await client.patch("/api/v2/flags/shop/f", json=body, headers={**ADMIN, **SEMANTIC})
    assert response.status_code == 200, response.text
    assert response.json()["maintainerTeamKey"] == "ops"


async def test_teams_are_listed_by_key_a_page_at_a_time(client: httpx.AsyncClient) -> None:
    for key in ("ops", "apps", "data"):
        made = await client.post("/api/v2/teams", json={"key": key, "name": key}, headers=ADMIN)
        assert made.status_code == 201, made.text

    async def keys(query: str) -> tuple[list[str], int]:
        answer = await client.get(f"/api/v2/teams{query}", headers=ADMIN)
        assert answer.status_code == 200, answer.text
        return [t["key"] for t in answer.json()["items"]], answer.json()["totalCount"]

    assert await keys("") == (["apps", "data", "ops"], 3)
    assert await keys("?limit=2") == (["apps", "data"], 3)
    assert await keys("?limit=2&offset=2") == (["ops"], 3)
    assert problem(await client.get("/api/v2/teams?limit=0", headers=ADMIN), 400)["path"] == (
        "/limit"
    )
    assert problem(await client.get("/api/v2/teams?offset=-1", headers=ADMIN), 400)["path"] == (
        "/offset"
    )


async def test_a_teams_maintainer_manages_its_members_but_not_its_roles(
    client: httpx.AsyncClient,
) -> None:
    """A `no_access` member named maintainer (`maintainTeam`) adds members and renames the team;
    giving the team a role still needs a role that allows it."""
    member = await setup(client)
    csrf = (await client.get("/api/v2/session")).json()["csrfToken"]
    other = await invite(client, "bob@example.com", role="reader")
    grants = [{"actionSet": "maintainTeam", "memberIDs": [member]}]
    made = await client.post(
        "/api/v2/teams", json={"key": "ops", "name": "O", "permissionGrants": grants}, headers=ADMIN
    )
    assert made.status_code == 201, made.text
    mine = {"X-CSRF-Token": csrf}
    added = await patch_team(
        client,
        "ops",
        {"kind": "addMembers", "values": [other["_id"]]},
        {"kind": "updateName", "value": "Ops"},
        headers=mine,
    )
    assert added.status_code == 200, added.text
    assert (added.json()["memberIDs"], added.json()["name"]) == ([other["_id"]], "Ops")
    refused = problem(
        await patch_team(
            client, "ops", {"kind": "addCustomRoles", "values": ["looker"]}, headers=mine
        ),
        403,
    )
    assert (refused["action"], refused["resource"]) == ("updateTeamCustomRoles", "team/ops")
    made = await client.post("/api/v2/teams", json={"key": "apps", "name": "A"}, headers=ADMIN)
    problem(
        await patch_team(client, "apps", {"kind": "updateName", "value": "Apps"}, headers=mine),
        403,
    )
