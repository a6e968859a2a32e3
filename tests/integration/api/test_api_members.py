"""Members over the API (`/api/v2/members`, LaunchDarkly's shapes): invitation with a one-time
secret, filters, JSON Patch of `/role`, `/customRoles` and `/deactivated`; a signed-in member is
decided by their roles as they are at each request (a change applies to the open session, custom
roles replace the base role); deactivation ends the member's sessions and revokes their tokens;
a member changes their own name and password and lists their own tokens. Bad input is a 400
naming the field; every change is an audit entry naming who made it."""

from __future__ import annotations

from typing import Any

import httpx
from platform_api import ADMIN, audited, create_project, problem

PASSWORD = "a long enough password"
SEMANTIC = {"Content-Type": "application/json; domain-model=launchdarkly.semanticpatch"}
TOGGLER = {
    "key": "toggler",
    "name": "Toggle production",
    "policy": [
        {"effect": "allow", "actions": ["viewProject"], "resources": ["proj/*"]},
        {"effect": "allow", "actions": ["updateOn"], "resources": ["proj/*:env/production:flag/*"]},
    ],
}


async def invite(client: httpx.AsyncClient, email: str, **form: Any) -> dict[str, Any]:
    response = await client.post("/api/v2/members", json=[{"email": email, **form}], headers=ADMIN)
    assert response.status_code == 201, response.text
    (member,) = response.json()["items"]
    member_body: dict[str, Any] = member
    return member_body


async def join(client: httpx.AsyncClient, email: str, **form: Any) -> tuple[str, str]:
    """Invite, accept the invitation, sign in: (member id, CSRF token of the session)."""
    member = await invite(client, email, **form)
    body = {"invitation": member["_invitation"], "password": PASSWORD}
    accepted = await client.post("/api/v2/members/invitations", json=body)
    assert accepted.status_code == 200, accepted.text
    signed = await client.post("/api/v2/session", json={"email": email, "password": PASSWORD})
    assert signed.status_code == 201, signed.text
    return member["_id"], signed.json()["csrfToken"]


async def patch(client: httpx.AsyncClient, member: str, ops: list[dict[str, Any]]) -> Any:
    response = await client.patch(f"/api/v2/members/{member}", json=ops, headers=ADMIN)
    assert response.status_code == 200, response.text
    return response.json()


async def test_an_invited_member_joins_once_and_is_listed(client: httpx.AsyncClient) -> None:
    member = await invite(client, "Ada@Example.com", role="writer", firstName="Ada")
    assert (member["email"], member["role"], member["_pendingInvite"]) == (
        "ada@example.com",
        "writer",
        True,
    )
    body = {"invitation": member["_invitation"], "password": PASSWORD}
    problem(await client.post("/api/v2/session", json={"email": "ada@example.com"}), 400)
    joined = await client.post("/api/v2/members/invitations", json=body)
    assert joined.status_code == 200, joined.text
    assert joined.json()["_pendingInvite"] is False
    problem(await client.post("/api/v2/members/invitations", json=body), 401)
    signed = await client.post(
        "/api/v2/session", json={"email": "ada@example.com", "password": PASSWORD}
    )
    assert signed.status_code == 201, signed.text

    await invite(client, "bob@example.com", role="reader", lastName="Builder")
    listed = await client.get("/api/v2/members", params={"filter": "role:writer"}, headers=ADMIN)
    assert [m["email"] for m in listed.json()["items"]] == ["ada@example.com"]
    assert listed.json()["items"][0]["_lastSeen"] > 0
    found = await client.get("/api/v2/members", params={"filter": "query:builder"}, headers=ADMIN)
    assert [m["email"] for m in found.json()["items"]] == ["bob@example.com"]
    me = await client.get("/api/v2/members/me")
    assert me.json()["_id"] == member["_id"]
    assert "_invitation" not in me.json()
    assert [a[0] for a in await audited(client, "member")] == [
        "createMember",
        "acceptInvitation",
        "createMember",
    ]
    assert (await audited(client, "member"))[0][2] == "admin-token"


async def test_bad_member_input_is_400_naming_the_field(client: httpx.AsyncClient) -> None:
    await invite(client, "ada@example.com", role="reader")
    cases: list[tuple[Any, str]] = [
        ([], "/"),
        ([{"email": "x@example.com", "role": "owner"}], "/0/role"),
        ([{"email": "x@example.com"}], "/0/role"),
        ([{"email": "not an email", "role": "reader"}], "/0/email"),
        ([{"email": "ada@example.com", "role": "reader"}], "/0/email"),
        ([{"email": "x@example.com", "role": "reader", "password": PASSWORD}], "/0/password"),
        ([{"email": "x@example.com", "customRoles": ["nope"]}], "/0/customRoles/0"),
        ([{"email": "x@example.com", "role": "reader", "teamKeys": ["nope"]}], "/0/teamKeys/0"),
        (
            [
                {"email": "x@example.com", "role": "reader"},
                {"email": "X@example.com", "role": "reader"},
            ],
            "/1/email",
        ),
    ]
    for body, path in cases:
        response = await client.post("/api/v2/members", json=body, headers=ADMIN)
        assert problem(response, 400)["path"] == path, body
    assert (await client.get("/api/v2/members", headers=ADMIN)).json()["totalCount"] == 1

    member = (await client.get("/api/v2/members", headers=ADMIN)).json()["items"][0]["_id"]
    for ops, path in [
        ([{"op": "replace", "path": "/email", "value": "x@y.z"}], "/0/path"),
        ([{"op": "replace", "path": "/role", "value": "owner"}], "/0/value"),
        ([{"op": "add", "path": "/customRoles/-", "value": "nope"}], "/customRoles/0"),
        ([{"op": "replace", "path": "/deactivated", "value": "yes"}], "/0/value"),
    ]:
        response = await client.patch(f"/api/v2/members/{member}", json=ops, headers=ADMIN)
        assert problem(response, 400)["path"] == path, ops
    bad_filter = await client.get("/api/v2/members", params={"filter": "colour:red"}, headers=ADMIN)
    assert problem(bad_filter, 400)["path"] == "/filter"
    problem(await client.get("/api/v2/members/nobody", headers=ADMIN), 404)


async def test_a_role_change_applies_to_the_open_session_and_custom_roles_replace_the_base(
    client: httpx.AsyncClient,
) -> None:
    await create_project(client, "shop")
    made = await client.post("/api/v2/flags/shop", json={"key": "f", "name": "F"}, headers=ADMIN)
    assert made.status_code == 201, made.text
    assert (await client.post("/api/v2/roles", json=TOGGLER, headers=ADMIN)).status_code == 201
    member, csrf = await join(client, "ada@example.com", role="reader")
    write = {"X-CSRF-Token": csrf}

    assert (await client.get("/api/v2/flags/shop/f")).status_code == 200
    refused = problem(
        await client.post("/api/v2/flags/shop", json={"key": "g", "name": "G"}, headers=write),
        403,
    )
    assert (refused["action"], refused["resource"]) == ("createFlag", "proj/shop:env/*:flag/*")

    await patch(client, member, [{"op": "replace", "path": "/role", "value": "writer"}])
    created = await client.post("/api/v2/flags/shop", json={"key": "g", "name": "G"}, headers=write)
    assert created.status_code == 201, created.text

    await patch(client, member, [{"op": "add", "path": "/customRoles", "value": ["toggler"]}])
    turn_on = {"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]}
    on = await client.patch("/api/v2/flags/shop/f", json=turn_on, headers={**write, **SEMANTIC})
    assert on.status_code == 200, on.text
    replaced = problem(
        await client.post("/api/v2/flags/shop", json={"key": "h", "name": "H"}, headers=write),
        403,
    )
    assert replaced["action"] == "createFlag"
    assert [
        (a, r, who) for a, r, who in await audited(client, "member") if a == "updateMember"
    ] == [
        ("updateMember", f"member/{member}", "admin-token"),
        ("updateMember", f"member/{member}", "admin-token"),
    ]


async def test_deactivation_ends_sessions_and_revokes_the_members_tokens(
    client: httpx.AsyncClient,
) -> None:
    member, csrf = await join(client, "ada@example.com", role="admin")
    made = await client.post(
        "/api/v2/tokens", json={"name": "ada's", "role": "admin"}, headers={"X-CSRF-Token": csrf}
    )
    assert made.status_code == 201, made.text
    token = {"Authorization": made.json()["token"]}
    assert (await client.get("/api/v2/projects", headers=token)).status_code == 200
    own = (await client.get("/api/v2/members/me/tokens")).json()["items"]
    assert [t["_id"] for t in own] == [made.json()["_id"]]

    await patch(client, member, [{"op": "replace", "path": "/role", "value": "reader"}])
    narrowed = problem(
        await client.post("/api/v2/projects", json={"key": "p", "name": "P"}, headers=token), 403
    )
    assert narrowed["action"] == "createProject"

    await patch(client, member, [{"op": "replace", "path": "/deactivated", "value": True}])
    problem(await client.get("/api/v2/projects"), 401)
    problem(await client.get("/api/v2/projects", headers=token), 401)
    again = await client.post(
        "/api/v2/session", json={"email": "ada@example.com", "password": PASSWORD}
    )
    problem(again, 401)
    revoked = [entry for entry in await audited(client, "token") if entry[0] == "deleteAccessToken"]
    assert revoked == [("deleteAccessToken", f"token/{made.json()['_id']}", "admin-token")]

    deleted = await client.delete(f"/api/v2/members/{member}", headers=ADMIN)
    assert deleted.status_code == 204
    problem(await client.get(f"/api/v2/members/{member}", headers=ADMIN), 404)


async def test_a_member_changes_their_own_password(client: httpx.AsyncClient) -> None:
    _, csrf = await join(client, "ada@example.com", role="reader")
    write = {"X-CSRF-Token": csrf}
    wrong = {"currentPassword": "not it at all", "password": "another long password"}
    response = await client.post("/api/v2/members/me/password", json=wrong, headers=write)
    assert problem(response, 400)["path"] == "/currentPassword"
    right = {"currentPassword": PASSWORD, "password": "another long password"}
    response = await client.post("/api/v2/members/me/password", json=right, headers=write)
    assert response.status_code == 204, response.text
    problem(await client.get("/api/v2/members/me"), 401)
    old = {"email": "ada@example.com", "password": PASSWORD}
    problem(await client.post("/api/v2/session", json=old), 401)
    new = {"email": "ada@example.com", "password": "another long password"}
    assert (await client.post("/api/v2/session", json=new)).status_code == 201


async def test_a_reader_changes_their_own_name_and_nobody_elses(client: httpx.AsyncClient) -> None:
    member, csrf = await join(client, "ada@example.com", role="reader", firstName="Ada")
    write = {"X-CSRF-Token": csrf}
    ops = [
        {"op": "replace", "path": "/firstName", "value": " Augusta Ada "},
        {"op": "replace", "path": "/lastName", "value": "King"},
    ]
    response = await client.patch("/api/v2/members/me/profile", json=ops, headers=write)
    assert response.status_code == 200, response.text
    assert (response.json()["firstName"], response.json()["lastName"]) == ("Augusta Ada", "King")
    me = (await client.get("/api/v2/members/me")).json()
    assert (me["_id"], me["firstName"], me["lastName"]) == (member, "Augusta Ada", "King")
    assert ("updateMember", f"member/{member}") in [
        entry[:2] for entry in await audited(client, "member")
    ]

    role = [{"op": "replace", "path": "/role", "value": "admin"}]
    response = await client.patch("/api/v2/members/me/profile", json=role, headers=write)
    assert problem(response, 400)["path"] == "/0/path"
    long_name = [{"op": "replace", "path": "/lastName", "value": "x" * 201}]
    response = await client.patch("/api/v2/members/me/profile", json=long_name, headers=write)
    assert problem(response, 400)["path"] == "/0/value"
    removal = [{"op": "remove", "path": "/firstName"}]
    response = await client.patch("/api/v2/members/me/profile", json=removal, headers=write)
    assert problem(response, 400)["path"] == "/0/op"
    problem(await client.patch(f"/api/v2/members/{member}", json=ops, headers=write), 403)
    problem(await client.patch("/api/v2/members/me/profile", json=ops, headers=ADMIN), 404)
