"""SCIM 2.0 provisioning over the whole server (`/scim/v2`, RFC 7643/7644): an admin makes a SCIM
token; users become members and groups teams; filters (`eq`, `and`) and paging; PATCH add,
replace and remove (a group's members too); deprovisioning (active false, or DELETE) deactivates
the member and ends its session and tokens at once; every change is audited with the SCIM token
as actor; bad input is a SCIM error body, never a 500."""

from __future__ import annotations

from typing import Any

import httpx
from platform_api import ADMIN, audited
from test_api_members import join

SCIM = "application/scim+json"
USER = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"


async def scim_token(client: httpx.AsyncClient) -> tuple[str, dict[str, str]]:
    made = await client.post("/api/v2/scim/tokens", json={"name": "okta"}, headers=ADMIN)
    assert made.status_code == 201, made.text
    body = made.json()
    return body["_id"], {"Authorization": f"Bearer {body['token']}", "Content-Type": SCIM}


def user(name: str, **more: Any) -> dict[str, Any]:
    return {
        "schemas": [USER],
        "userName": name,
        "name": {"givenName": name.title(), "familyName": "Lovelace"},
        "emails": [{"value": f"{name}@example.com", "type": "work", "primary": True}],
        "active": True,
        **more,
    }


def scim_error(response: httpx.Response, status: int, scim_type: str | None = None) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == SCIM
    body = response.json()
    assert (body["schemas"], body["status"]) == ([ERROR], str(status))
    assert body.get("scimType") == scim_type
    detail: str = body["detail"]
    return detail


async def create(client: httpx.AsyncClient, auth: dict[str, str], kind: str, body: Any) -> Any:
    response = await client.post(f"/scim/v2/{kind}", json=body, headers=auth)
    assert response.status_code == 201, response.text
    assert response.headers["location"] == response.json()["meta"]["location"]
    return response.json()


async def patch(
    client: httpx.AsyncClient, auth: dict[str, str], where: str, *ops: dict[str, Any]
) -> Any:
    body = {"schemas": [PATCH_OP], "Operations": list(ops)}
    response = await client.patch(f"/scim/v2/{where}", json=body, headers=auth)
    assert response.status_code == 200, response.text
    return response.json()


async def test_users_become_members_and_are_found_by_filter_and_pages(
    client: httpx.AsyncClient,
) -> None:
    token_id, auth = await scim_token(client)
    ada = await create(client, auth, "Users", user("ada", externalId="okta-1"))
    for name in ("bob", "cy"):
        await create(client, auth, "Users", user(name))
    member = (await client.get(f"/api/v2/members/{ada['id']}", headers=ADMIN)).json()
    assert (member["email"], member["firstName"], member["role"]) == (
        "ada@example.com",
        "Ada",
        "reader",
    )

    async def found(**params: Any) -> Any:
        response = await client.get("/scim/v2/Users", params=params, headers=auth)
        assert response.status_code == 200, response.text
        return response.json()

    assert [u["id"] for u in (await found(filter='userName eq "ADA"'))["Resources"]] == [ada["id"]]
    both = await found(filter='externalId eq "okta-1" and name.givenName eq "Ada"')
    assert both["totalResults"] == 1
    assert (await found(filter='externalId eq "OKTA-1"'))["totalResults"] == 0  # case-exact
    page = await found(startIndex=2, count=1)
    assert (page["totalResults"], page["startIndex"], page["itemsPerPage"]) == (3, 2, 1)
    assert page["Resources"][0]["userName"] == "bob"
    only = await found(filter='userName eq "cy"', attributes="userName")
    assert set(only["Resources"][0]) == {"id", "schemas", "userName"}
    scim_error(
        await client.get("/scim/v2/Users?filter=userName%20eq", headers=auth), 400, "invalidFilter"
    )
    assert ("createMember", f"member/{ada['id']}", token_id) in await audited(client, "member")


async def test_groups_become_teams_and_patch_their_members(client: httpx.AsyncClient) -> None:
    token_id, auth = await scim_token(client)
    ada, bob = [await create(client, auth, "Users", user(n)) for n in ("ada", "bob")]
    group = await create(
        client,
        auth,
        "Groups",
        {"schemas": [GROUP], "displayName": "Platform Ops", "members": [{"value": ada["id"]}]},
    )
    team = (await client.get("/api/v2/teams/platform-ops", headers=ADMIN)).json()
    assert (team["memberIDs"], team["_idpSynced"]) == ([ada["id"]], True)
    added = await patch(
        client,
        auth,
        f"Groups/{group['id']}",
        {"op": "add", "path": "members", "value": [{"value": bob["id"]}]},
    )
    assert [m["value"] for m in added["members"]] == [ada["id"], bob["id"]]
    removed = await patch(
        client,
        auth,
        f"Groups/{group['id']}",
        {"op": "remove", "path": f'members[value eq "{ada["id"]}"]'},
        {"op": "replace", "path": "displayName", "value": "Ops"},
    )
    assert ([m["value"] for m in removed["members"]], removed["displayName"]) == (
        [bob["id"]],
        "Ops",
    )
    shown = (await client.get(f"/scim/v2/Users/{bob['id']}", headers=auth)).json()
    assert shown["groups"] == [
        {"value": group["id"], "display": "Ops", "$ref": f"/scim/v2/Groups/{group['id']}"}
    ]
    listed = await client.get('/scim/v2/Groups?filter=displayName eq "ops"', headers=auth)
    assert listed.json()["totalResults"] == 1
    scim_error(
        await client.patch(
            f"/scim/v2/Groups/{group['id']}",
            json={
                "schemas": [PATCH_OP],
                "Operations": [{"op": "add", "path": "members", "value": [{"value": "nobody"}]}],
            },
            headers=auth,
        ),
        400,
        "invalidValue",
    )
    assert (await client.delete(f"/scim/v2/Groups/{group['id']}", headers=auth)).status_code == 204
    assert (await client.get("/api/v2/teams/platform-ops", headers=ADMIN)).status_code == 404
    kinds = [(a, who) for a, _, who in await audited(client, "team")]
    assert kinds == [
        (a, token_id) for a in ("createTeam", "updateTeam", "updateTeam", "deleteTeam")
    ]


async def signed_in_with_token(client: httpx.AsyncClient, email: str) -> tuple[str, str]:
    """A local admin member signed in, with a personal token: (session cookie, token secret)."""
    _, csrf = await join(client, email, role="admin")
    cookie = client.cookies["flagstaff_session"]
    made = await client.post(
        "/api/v2/tokens", json={"name": "laptop", "role": "reader"}, headers={"X-CSRF-Token": csrf}
    )
    assert made.status_code == 201, made.text
    client.cookies.clear()
    return cookie, made.json()["token"]


async def test_deprovisioning_ends_the_members_session_and_tokens_at_once(
    client: httpx.AsyncClient,
) -> None:
    """Members made before provisioning are taken over by email; then `active: false` (ada) and
    DELETE (bob) each end the member's session and token in the same request."""
    _, auth = await scim_token(client)
    access = {
        name: await signed_in_with_token(client, f"{name}@example.com") for name in ("ada", "bob")
    }

    async def status(name: str) -> tuple[int, int]:
        cookie, secret = access[name]
        by_session = await client.get(
            "/api/v2/members/me", headers={"Cookie": f"flagstaff_session={cookie}"}
        )
        by_token = await client.get("/api/v2/projects", headers={"Authorization": secret})
        return by_session.status_code, by_token.status_code

    ada = await create(client, auth, "Users", user("ada"))
    bob = await create(client, auth, "Users", user("bob"))
    assert await status("ada") == await status("bob") == (200, 200)
    off = await patch(
        client, auth, f"Users/{ada['id']}", {"op": "replace", "value": {"active": False}}
    )
    assert off["active"] is False
    assert await status("ada") == (401, 401)
    assert await status("bob") == (200, 200)
    assert (await client.delete(f"/scim/v2/Users/{bob['id']}", headers=auth)).status_code == 204
    assert await status("bob") == (401, 401)
    scim_error(await client.get(f"/scim/v2/Users/{bob['id']}", headers=auth), 404)
    member = (await client.get(f"/api/v2/members/{bob['id']}", headers=ADMIN)).json()
    assert member["deactivated"] is True
    revoked = [r for a, r, _ in await audited(client, "token") if a == "deleteAccessToken"]
    assert len(revoked) == 2


async def test_scim_refuses_bad_tokens_and_bad_bodies(client: httpx.AsyncClient) -> None:
    _, auth = await scim_token(client)
    scim_error(await client.get("/scim/v2/Users", headers=ADMIN), 401)
    refused = await client.get("/api/v2/members", headers={"Authorization": auth["Authorization"]})
    assert refused.status_code == 401, refused.text
    scim_error(
        await client.post("/scim/v2/Users", json={"schemas": [USER]}, headers=auth),
        400,
        "invalidValue",
    )
    await create(client, auth, "Users", user("ada"))
    scim_error(
        await client.post("/scim/v2/Users", json=user("ada"), headers=auth), 409, "uniqueness"
    )
    scim_error(await client.get("/scim/v2/Users/nope", headers=auth), 404)
    scim_error(await client.post("/scim/v2/Users", content=b"{", headers=auth), 400, "invalidValue")
    config = (await client.get("/scim/v2/ServiceProviderConfig")).json()
    assert config["patch"]["supported"] is True
